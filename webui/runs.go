package webui

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/mcpserver"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/patterns"
)

// runsPerPage is the runs list's page size.
const runsPerPage = 50

// statuses are the runs list's status filter choices.
var statuses = []contracts.RunStatus{contracts.RunPending, contracts.RunReady, contracts.RunRunning, contracts.RunInterrupted,
	contracts.RunCompleted, contracts.RunFailed, contracts.RunRejected, contracts.RunCancelled}

type runsData struct {
	Runs     []memory.RunSummary
	Statuses []contracts.RunStatus
	Status   string
	UserQ    string // admins: whose runs ("" all)
	Next     string // the next page's URL, "" on the last page
}

// runsPage lists the person's runs (admins: everyone's, or one user's),
// newest first, filtered by status, paged by update time.
func (c *Console) runsPage(w http.ResponseWriter, r *http.Request, s *session) {
	if c.opts.Runs == nil {
		c.fail(w, r, s, http.StatusNotFound, contracts.Errorf(contracts.CodeInvalidConfig, "this server lists no runs"))
		return
	}
	q := r.URL.Query()
	d := runsData{Statuses: statuses, Status: q.Get("status")}
	f := memory.Filter{UserID: s.id.User, Limit: runsPerPage + 1}
	if s.id.Has(mcpserver.RoleAdmin) {
		d.UserQ = strings.TrimSpace(q.Get("user"))
		f.UserID = d.UserQ // "" lists every user's runs
	}
	if d.Status != "" {
		if !slices.Contains(statuses, contracts.RunStatus(d.Status)) {
			c.fail(w, r, s, http.StatusBadRequest, contracts.Errorf(contracts.CodeInvalidInput, "status %q: want one of %v", d.Status, statuses).With("field", "status"))
			return
		}
		f.Status = []contracts.RunStatus{contracts.RunStatus(d.Status)}
	}
	if b := q.Get("before"); b != "" {
		t, err := time.Parse(time.RFC3339Nano, b)
		if err != nil {
			c.fail(w, r, s, http.StatusBadRequest, contracts.Errorf(contracts.CodeInvalidInput, "before %q: want an RFC 3339 time", b).With("field", "before"))
			return
		}
		f.UpdatedBefore, f.BeforeID = t, q.Get("before_id")
	}
	runs, err := c.opts.Runs.List(r.Context(), f)
	if err != nil {
		c.fail(w, r, s, httpStatus(err), err)
		return
	}
	if len(runs) > runsPerPage {
		runs = runs[:runsPerPage]
		last := runs[len(runs)-1]
		next := url.Values{"before": {last.UpdatedAt.Format(time.RFC3339Nano)}, "before_id": {last.ID}}
		if d.Status != "" {
			next.Set("status", d.Status)
		}
		if d.UserQ != "" {
			next.Set("user", d.UserQ)
		}
		d.Next = "/ui/runs?" + next.Encode()
	}
	d.Runs = runs
	c.render(w, "runs", s, d)
}

type newRunData struct {
	Templates []patterns.Template
	Sessions  []agent.SessionSummary // the person's, to pick one to add a turn to
	Error     *contracts.Error
	Goal      string
	Plan      string
	Template  string
	Inputs    string
	Session   string
}

func (c *Console) newRunPage(w http.ResponseWriter, r *http.Request, s *session) {
	c.showNewRun(w, r, s, http.StatusOK, newRunData{Session: r.URL.Query().Get("session")})
}

func (c *Console) showNewRun(w http.ResponseWriter, r *http.Request, s *session, status int, d newRunData) {
	if c.opts.Templates != nil {
		ts, err := c.opts.Templates.Templates(r.Context(), s.id.User)
		if err != nil {
			c.log.Warn("console: list templates", "user", s.id.User, "err", err)
		}
		d.Templates = ts
	}
	list, err := c.conversations(r, s.id.User, conversationsShown)
	if err != nil {
		c.log.Warn("console: list sessions", "user", s.id.User, "err", err)
	}
	d.Sessions = list
	if fetched(r) && d.Error != nil {
		writeJSONError(w, status, d.Error)
		return
	}
	w.WriteHeader(status)
	c.render(w, "newrun", s, d)
}

// startRun starts a run from a goal, a plan or a saved template, and
// goes to its page once it is stored; the run goes on without the page.
func (c *Console) startRun(w http.ResponseWriter, r *http.Request, s *session) {
	d := newRunData{Goal: strings.TrimSpace(r.PostFormValue("goal")), Plan: strings.TrimSpace(r.PostFormValue("plan")),
		Template: strings.TrimSpace(r.PostFormValue("template")), Inputs: r.PostFormValue("inputs"), Session: strings.TrimSpace(r.PostFormValue("session"))}
	var fn func(ctx context.Context) (*contracts.Run, error)
	switch {
	case d.Template != "":
		if c.opts.Templates == nil {
			d.Error = contracts.Errorf(contracts.CodeInvalidConfig, "pattern memory is off: there are no templates").With("field", "template")
			break
		}
		inputs, err := parseInputs(d.Inputs)
		if err != nil {
			d.Error = contracts.AsError(err)
			break
		}
		req := agent.TemplateRequest{Name: d.Template, UserID: s.id.User, Goal: d.Goal, Inputs: inputs, Session: d.Session}
		fn = func(ctx context.Context) (*contracts.Run, error) {
			run, err := c.opts.Templates.PlanTemplate(ctx, req)
			if err != nil || run.Status != contracts.RunReady {
				return run, err
			}
			return c.opts.Engine.Execute(ctx, run.ID)
		}
	case d.Plan != "":
		p, err := parsePlan(d.Plan)
		if err != nil {
			d.Error = contracts.AsError(err)
			break
		}
		fn = func(ctx context.Context) (*contracts.Run, error) {
			return c.opts.Engine.Run(ctx, agent.Request{Goal: p.Goal, Plan: p, UserID: s.id.User, Session: d.Session})
		}
	case d.Goal != "":
		fn = func(ctx context.Context) (*contracts.Run, error) {
			return c.opts.Engine.Run(ctx, agent.Request{Goal: d.Goal, UserID: s.id.User, Session: d.Session})
		}
	default:
		d.Error = contracts.Errorf(contracts.CodeInvalidInput, "give a goal, a plan or a template").With("field", "goal")
	}
	if d.Error != nil {
		c.showNewRun(w, r, s, http.StatusBadRequest, d)
		return
	}
	id, err := c.launch(r.Context(), "", fn)
	if err != nil {
		d.Error = contracts.AsError(err)
		c.showNewRun(w, r, s, httpStatus(err), d)
		return
	}
	c.done(w, r, "/ui/runs/"+id, false)
}

// parsePlan reads a plan typed into a form the way the MCP plan argument
// is read (contracts.ParsePlan: the Action Plan schema) and checks it as a
// value (contracts.ValidatePlan), naming the field.
func parsePlan(text string) (*contracts.Plan, error) {
	p, err := contracts.ParsePlan([]byte(text))
	if err == nil {
		err = contracts.ValidatePlan(p)
	}
	if err != nil {
		ce := contracts.AsError(err)
		if _, ok := ce.Details["field"]; !ok {
			ce = ce.With("field", "plan")
		}
		return nil, ce
	}
	return p, nil
}

// validatePlan is the page's inline check of a plan as it is typed: the
// body is the plan's JSON text.
func (c *Console) validatePlan(w http.ResponseWriter, r *http.Request, _ *session) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeJSONError(w, http.StatusRequestEntityTooLarge, contracts.Errorf(contracts.CodeInvalidInput, "the plan is too large (at most %d bytes)", maxForm).With("field", "plan"))
		return
	}
	p, err := parsePlan(string(body))
	if err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": contracts.AsError(err)})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "actions": len(p.Actions)})
}

// formValue reads a value typed into a form: JSON when it is a JSON
// number, boolean, null, array, object or string, else the text itself
// (as MCP elicitation answers are read).
func formValue(s string) any {
	t := strings.TrimSpace(s)
	if t != "" && json.Valid([]byte(t)) {
		if v, err := contracts.DecodeJSON([]byte(t)); err == nil {
			return v
		}
	}
	return s
}

// parseInputs reads template inputs, one ACTION_ID.FIELD=VALUE a line
// (as `ordo run --template --input` takes them).
func parseInputs(text string) (map[string]any, error) {
	out := map[string]any{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, contracts.Errorf(contracts.CodeInvalidInput, "inputs line %d: want ACTION_ID.FIELD=VALUE", i+1).With("field", "inputs").With("line", i+1)
		}
		out[strings.TrimSpace(k)] = formValue(v)
	}
	return out, nil
}

// launch runs fn on its own goroutine, detached from the request (a run
// outlives the page that started it), and returns the run's id once it is
// stored and moving — the first engine event after its first checkpoint,
// for run runID when given — or fn's error when it refused before that
// (a bad plan, a decision that does not fit): nothing happened then.
func (c *Console) launch(ctx context.Context, runID string, fn func(context.Context) (*contracts.Run, error)) (string, error) {
	first := make(chan string, 1)
	ctx = agent.WithEvents(context.WithoutCancel(ctx), func(ev agent.Event) {
		if ev.Seq > 0 && (runID == "" || ev.RunID == runID) {
			select {
			case first <- ev.RunID:
			default:
			}
		}
	})
	type outcome struct {
		run *contracts.Run
		err error
	}
	end := make(chan outcome, 1)
	go func() {
		run, err := fn(ctx)
		if err != nil {
			id := runID
			if run != nil {
				id = run.ID
			}
			c.log.Info("console run stopped with an error", "run", id, "err", err)
		}
		end <- outcome{run, err}
	}()
	select {
	case id := <-first:
		return id, nil
	case o := <-end:
		select {
		case id := <-first: // it moved, then stopped (a failed run): show it
			return id, nil
		default:
		}
		if o.err != nil {
			return "", o.err
		}
		if o.run == nil {
			return "", contracts.Errorf(contracts.CodeInternal, "the engine returned no run")
		}
		return o.run.ID, nil
	}
}

// decide answers the run's interrupt with the decision the form names,
// as the approve tool does, then lets the run go on without the page.
func (c *Console) decide(w http.ResponseWriter, r *http.Request, s *session) {
	run, err := c.opts.MCP.LoadRun(r.Context(), r.PathValue("id"))
	if err != nil {
		c.fail(w, r, s, httpStatus(err), err)
		return
	}
	d, err := decisionFrom(r, run, s.id.User)
	if err != nil {
		c.fail(w, r, s, http.StatusBadRequest, err)
		return
	}
	if _, err := c.launch(r.Context(), run.ID, func(ctx context.Context) (*contracts.Run, error) {
		return c.opts.Engine.Resume(ctx, run.ID, d)
	}); err != nil {
		c.fail(w, r, s, httpStatus(err), err)
		return
	}
	c.done(w, r, "/ui/runs/"+run.ID, true)
}

// decisionFrom reads an interrupt form: decision, note, and what the
// decision carries (an edited plan or payload, answers, a budget limit).
func decisionFrom(r *http.Request, run *contracts.Run, by string) (contracts.Decision, error) {
	d := contracts.Decision{Kind: contracts.DecisionKind(r.PostFormValue("decision")), By: by, Note: strings.TrimSpace(r.PostFormValue("note"))}
	if run.Interrupt == nil {
		return d, contracts.Errorf(contracts.CodeInvalidDecision, "run %s is %s and waits for nobody", run.ID, run.Status).With("field", "decision")
	}
	if !slices.Contains(agent.Decisions(run.Interrupt.Kind), d.Kind) {
		return d, contracts.Errorf(contracts.CodeInvalidDecision, "decision %q does not fit a %s interrupt (want one of %v)", d.Kind, run.Interrupt.Kind, agent.Decisions(run.Interrupt.Kind)).
			With("field", "decision")
	}
	seq, err := strconv.ParseInt(r.PostFormValue("seq"), 10, 64)
	if err != nil || seq < 1 {
		return d, contracts.Errorf(contracts.CodeInvalidInput, "the form names no interrupt (seq %q): look at the page again", r.PostFormValue("seq")).
			With("field", "seq")
	}
	d.Seq = seq // the engine refuses it once the run has moved on (5003)
	if text := strings.TrimSpace(r.PostFormValue("plan")); text != "" {
		p, err := parsePlan(text)
		if err != nil {
			return d, err
		}
		d.Plan = p
	}
	if text := strings.TrimSpace(r.PostFormValue("payload")); text != "" {
		if _, err := contracts.DecodeJSON([]byte(text)); err != nil {
			return d, contracts.AsError(err).With("field", "payload")
		}
		d.Payload = json.RawMessage(text)
	}
	for k, vs := range r.PostForm {
		if name, ok := strings.CutPrefix(k, "answer:"); ok && len(vs) > 0 && strings.TrimSpace(vs[0]) != "" {
			if d.Answers == nil {
				d.Answers = map[string]any{}
			}
			d.Answers[name] = formValue(vs[0])
		}
	}
	return d, nil
}

// fork starts a new run from one of the person's runs at an action, with
// the same plan (Engine.Fork), and goes to the new run.
func (c *Console) fork(w http.ResponseWriter, r *http.Request, s *session) {
	c.startFrom(w, r, s, c.opts.Engine.Fork)
}

// retry starts a failed or cancelled run again from the step that stopped
// it (Steerer.Retry: a fork, as retry_run and `ordo runs retry`).
func (c *Console) retry(w http.ResponseWriter, r *http.Request, s *session) {
	st, ok := c.steerer(w, r, s)
	if ok {
		c.startFrom(w, r, s, st.Retry)
	}
}

// startFrom starts a new run, the person's, from one of their runs (at
// the form's action, if it names one), and goes to the new run.
func (c *Console) startFrom(w http.ResponseWriter, r *http.Request, s *session, start func(context.Context, agent.ForkRequest) (*contracts.Run, error)) {
	run, err := c.opts.MCP.LoadRun(r.Context(), r.PathValue("id"))
	if err != nil {
		c.fail(w, r, s, httpStatus(err), err)
		return
	}
	req := agent.ForkRequest{RunID: run.ID, FromAction: r.PostFormValue("from_action"), UserID: s.id.User}
	id, err := c.launch(r.Context(), "", func(ctx context.Context) (*contracts.Run, error) { return start(ctx, req) })
	if err != nil {
		c.fail(w, r, s, httpStatus(err), err)
		return
	}
	c.done(w, r, "/ui/runs/"+id, false)
}

// steer asks one of the person's runs to pause at its next step boundary
// or to stop for good (pause_run, cancel_run); the page follows it there.
func (c *Console) steer(w http.ResponseWriter, r *http.Request, s *session) {
	st, ok := c.steerer(w, r, s)
	if !ok {
		return
	}
	run, err := c.opts.MCP.LoadRun(r.Context(), r.PathValue("id"))
	if err != nil {
		c.fail(w, r, s, httpStatus(err), err)
		return
	}
	ask := map[string]func(context.Context, string, string) (*contracts.Run, error){"pause": st.Pause, "cancel": st.Cancel}[r.PostFormValue("do")]
	if ask == nil {
		c.fail(w, r, s, http.StatusBadRequest, contracts.Errorf(contracts.CodeInvalidInput, "do %q: want pause or cancel", r.PostFormValue("do")).With("field", "do"))
		return
	}
	if _, err := ask(r.Context(), run.ID, s.id.User); err != nil {
		c.fail(w, r, s, httpStatus(err), err)
		return
	}
	c.done(w, r, "/ui/runs/"+run.ID, true)
}

// steerer is the engine's way to pause, cancel and retry runs; an engine
// without one answers 404.
func (c *Console) steerer(w http.ResponseWriter, r *http.Request, s *session) (mcpserver.Steerer, bool) {
	st, ok := c.opts.Engine.(mcpserver.Steerer)
	if !ok {
		c.fail(w, r, s, http.StatusNotFound, contracts.Errorf(contracts.CodeInvalidConfig, "this engine cannot pause, cancel or retry runs"))
	}
	return st, ok
}

// runPage shows one run; runLive is its live part alone, which the page's
// script fetches again whenever the run's event stream moves.
func (c *Console) runPage(w http.ResponseWriter, r *http.Request, s *session) {
	run, err := c.opts.MCP.LoadRun(r.Context(), r.PathValue("id"))
	if err != nil {
		c.fail(w, r, s, httpStatus(err), err)
		return
	}
	c.render(w, "run", s, c.runView(run))
}

func (c *Console) runLive(w http.ResponseWriter, r *http.Request, s *session) {
	run, err := c.opts.MCP.LoadRun(r.Context(), r.PathValue("id"))
	if err != nil {
		c.fail(w, r, s, httpStatus(err), err)
		return
	}
	c.renderFragment(w, "run", "live", s, c.runView(run))
}

// runView is the run page's view, with the steering buttons when the
// engine steers runs.
func (c *Console) runView(run *contracts.Run) *runView {
	v := newRunView(run)
	if _, ok := c.opts.Engine.(mcpserver.Steerer); ok {
		v.Steer = steerable(run)
	}
	return v
}

// runEvents is the run's event stream for the page's EventSource, which
// sends the session cookie rather than a bearer token: the same stream as
// GET /runs/{id}/events (mcpserver.Server.ServeRunEvents). It ends with
// the session: a stream opened before signing out serves no more.
func (c *Console) runEvents(w http.ResponseWriter, r *http.Request, s *session) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()
	c.opts.MCP.ServeRunEvents(w, r.WithContext(ctx), s.id)
}

// eventKinds are the event names a run's stream uses (RunDelta.Kind: the
// entry kinds and the statuses); the page's script listens for each.
func eventKinds() []string {
	kinds := []string{"created", "snapshot", "decision", "interrupted", "plan", "step", "error"}
	for _, st := range statuses {
		kinds = append(kinds, string(st))
	}
	return kinds
}

// stateKeys lists a run's state keys in order.
func stateKeys(run *contracts.Run) []string { return slices.Sorted(maps.Keys(run.State)) }
