package mcpserver

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/ids"
)

// Request-state prefixes of the multi round-trip requests the server
// makes: a parked sampling job, or an elicitation for an interrupted run.
const (
	stateSample = "sample:"
	stateElicit = "elicit:"
)

// Input request ids inside one round trip.
const (
	inputSample = "sample"
	inputAnswer = "answer"
)

// engineCall is the engine work of one tool call.
type engineCall func(ctx context.Context) (*contracts.Run, error)

// drive runs call and renders its run. A retry of a multi round-trip
// request (RequestState set) continues the parked job or the interrupted
// run it names instead.
func (s *Server) drive(ctx context.Context, req mcp.CallToolRequest, mode viewMode, call engineCall) (*mcp.CallToolResult, error) {
	n := s.newNotifier(ctx, req)
	if st := req.Params.RequestState; st != "" {
		return s.continueRound(ctx, req, mode, st, n)
	}
	if user := identityFrom(ctx).User; s.samples(ctx, req) && s.jobs.parkedBy(user) >= maxParkedPerUser {
		return nil, contracts.Errorf(contracts.CodeLLMFailed, "%d of your calls already wait for your client's model to answer a sampling request: "+
			"answer them (or let them expire after %s) before starting more", maxParkedPerUser, s.opts.SamplingTimeout).With("user", user)
	}
	return s.await(ctx, req, s.startJob(ctx, req, n, call), n, mode)
}

// startJob runs call on its own goroutine, planning with the configured
// model or through the client's (agent.WithModel). n hears the job's
// events from the first one on.
func (s *Server) startJob(ctx context.Context, req mcp.CallToolRequest, n *notifier, call engineCall) *job {
	j := &job{user: identityFrom(ctx).User, out: make(chan outcome, 1), gone: make(chan struct{}), timeout: s.opts.SamplingTimeout, sink: n.event}
	var jctx context.Context
	if s.samples(ctx, req) {
		// The job outlives this request while it waits for the client's
		// answer, so it is cancelled only by its waiter or its timeout.
		jctx, j.cancel = context.WithCancel(context.WithoutCancel(ctx))
		j.token = newToken()
		jctx = agent.WithModel(jctx, s.opts.Sampling(&samplingModel{j: j}))
	} else {
		jctx, j.cancel = context.WithCancel(ctx)
	}
	jctx = agent.WithEvents(jctx, func(ev agent.Event) {
		j.event(ev)
		s.subs.runChanged(jctx, ev.RunID)
	})
	go func() {
		defer j.cancel()
		defer s.jobs.drop(j.token)
		run, err := call(jctx)
		if run != nil {
			s.subs.runChanged(jctx, run.ID) // a last checkpoint may follow the last event
		}
		j.finish(outcome{run: run, err: err})
	}()
	return j
}

// samples reports whether this request's engine should plan with the
// client's model: no model is configured, the client offers sampling, and
// the call is not a task (a task has no way to ask its client).
func (s *Server) samples(ctx context.Context, req mcp.CallToolRequest) bool {
	return !s.opts.HasLLM && s.opts.Sampling != nil && req.Params.Task == nil && clientCaps(ctx).Sampling != nil
}

// await waits for the job's next outcome: a finished call, or a model
// request to forward to the client (the job then parks until the retry).
// If ctx ends first (the client cancelled, or its task was cancelled) the
// job is cancelled and awaited, so the run stops at a step boundary with
// its checkpoint written. The job's events go to n until it returns, and
// n's notifications are written before the response.
func (s *Server) await(ctx context.Context, req mcp.CallToolRequest, j *job, n *notifier, mode viewMode) (*mcp.CallToolResult, error) {
	defer j.setSink(nil)
	select {
	case o := <-j.out:
		n.delivered()
		if o.ask != nil {
			j.pending = o.ask
			close(o.ask.shown)
			s.jobs.park(j)
			return server.NewInputRequestBuilder(stateSample+j.token).Sample(inputSample, o.ask.params).ToolResult(), nil
		}
		return s.finish(ctx, req, o.run, o.err, mode)
	case <-ctx.Done():
		j.cancel()
		for o := range j.out {
			if o.ask == nil {
				break
			}
		}
		return nil, ctx.Err()
	}
}

// finish renders a finished engine call. An interrupted run is asked about
// inline when the client can answer elicitations.
func (s *Server) finish(ctx context.Context, req mcp.CallToolRequest, run *contracts.Run, err error, mode viewMode) (*mcp.CallToolResult, error) {
	if err != nil {
		return nil, err
	}
	if in := run.Interrupt; run.Status == contracts.RunInterrupted && in != nil && len(in.Secret) > 0 {
		return runResult(run, mode, secretNote(run))
	}
	if run.Status == contracts.RunInterrupted && run.Interrupt != nil && s.elicits(ctx, req, mode) {
		params := elicitationFor(run)
		state := stateElicit + run.ID + ":" + strconv.FormatInt(run.Seq, 10)
		return server.NewInputRequestBuilder(state).Elicit(inputAnswer, params).ToolResult(), nil
	}
	return s.planResult(ctx, run, mode)
}

// elicits reports whether to ask about an interrupt inline: the client
// declared elicitation, the call is not a task, and it executes. plan
// never asks, because a decision resumes the run into execution and plan
// promises to stop before it.
func (s *Server) elicits(ctx context.Context, req mcp.CallToolRequest, mode viewMode) bool {
	return mode == execView && req.Params.Task == nil && clientCaps(ctx).Elicitation != nil
}

// continueRound handles the retry of a multi round-trip request.
func (s *Server) continueRound(ctx context.Context, req mcp.CallToolRequest, mode viewMode, state string, n *notifier) (*mcp.CallToolResult, error) {
	id := identityFrom(ctx)
	switch {
	case strings.HasPrefix(state, stateSample):
		j := s.jobs.take(strings.TrimPrefix(state, stateSample), id.User)
		if j == nil {
			return nil, contracts.Errorf(contracts.CodeInvalidInput, "the sampling request this answers is unknown or expired").With("field", "requestState")
		}
		j.setSink(n.event) // before the job resumes, so no event is missed
		j.pending.reply <- server.SamplingResponse(req.Params.InputResponses, inputSample)
		j.pending = nil
		return s.await(ctx, req, j, n, mode)
	case strings.HasPrefix(state, stateElicit):
		runID, seqText, _ := strings.Cut(strings.TrimPrefix(state, stateElicit), ":")
		seq, err := strconv.ParseInt(seqText, 10, 64)
		if err != nil {
			return nil, contracts.Errorf(contracts.CodeInvalidInput, "malformed request state").With("field", "requestState")
		}
		run, err := s.loadRun(ctx, runID)
		if err != nil {
			return nil, err
		}
		if run.Status != contracts.RunInterrupted || run.Interrupt == nil || run.Seq != seq {
			return nil, contracts.Errorf(contracts.CodeRunNotInterrupted, "run %s no longer waits for this answer (status %s)", run.ID, run.Status).
				With("run_id", run.ID).With("status", string(run.Status))
		}
		answer := server.ElicitationResponse(req.Params.InputResponses, inputAnswer)
		if answer == nil || answer.Action != mcp.ElicitationResponseActionAccept {
			action := "no answer"
			if answer != nil {
				action = string(answer.Action)
			}
			return runResult(run, mode, "the approval request was answered with "+action+": the run stays interrupted; answer it with the approve tool")
		}
		d, err := decisionFromElicitation(run.Interrupt, answer.Content)
		if err != nil {
			return nil, err
		}
		d.By, d.Seq = id.User, seq // refused if another answer moved the run on meanwhile
		return s.await(ctx, req, s.startJob(ctx, req, n, func(ctx context.Context) (*contracts.Run, error) {
			return s.opts.Engine.Resume(ctx, run.ID, d)
		}), n, mode)
	}
	return nil, contracts.Errorf(contracts.CodeInvalidInput, "unknown request state").With("field", "requestState")
}

// clientCaps are the capabilities the client declared: per request on
// protocol 2026-07-28, at initialize before it.
func clientCaps(ctx context.Context) mcp.ClientCapabilities {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientCapabilities != nil {
		return *info.ClientCapabilities
	}
	if sess, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return sess.GetClientCapabilities()
	}
	return mcp.ClientCapabilities{}
}

// outcome is what a job reports: a model request for the client, or the
// engine call's end.
type outcome struct {
	ask *ask
	run *contracts.Run
	err error
}

// job is one engine call in flight.
type job struct {
	token   string // set when the job may park waiting for sampling
	user    string
	cancel  context.CancelFunc
	out     chan outcome
	pending *ask // the ask the client is answering while parked
	timeout time.Duration
	// gone is closed when the client let a sampling request time out.
	gone     chan struct{}
	goneOnce sync.Once

	mu   sync.Mutex
	sink func(agent.Event)
}

// finish hands the engine call's end to the waiter. Every model request
// of the call has returned by now, so an ask still queued in out was never
// shown and nobody waits for its answer: it is dropped, where sending
// behind it would block the job (and its table entry) forever.
func (j *job) finish(o outcome) {
	for {
		select {
		case j.out <- o:
			return
		case <-j.out:
		}
	}
}

func (j *job) setSink(fn func(agent.Event)) {
	j.mu.Lock()
	j.sink = fn
	j.mu.Unlock()
}

// event forwards an engine event to the request currently driving the
// job. A parked job is blocked waiting for its model's answer and emits
// nothing; the request that answers installs its sink before resuming it.
func (j *job) event(ev agent.Event) {
	j.mu.Lock()
	fn := j.sink
	j.mu.Unlock()
	if fn != nil {
		fn(ev)
	}
}

// maxParkedPerUser bounds the calls of one user parked waiting for their
// client's sampling answers. A parked call outlives its request, holding a
// run, its lease and goroutines until its answer or its timeout, so a
// client that never answers could otherwise pile them up at no cost to
// itself (200 calls in a second held 600 goroutines for 2 minutes).
const maxParkedPerUser = 64

// jobTable holds jobs parked between the rounds of a sampling request.
type jobTable struct {
	mu     sync.Mutex
	jobs   map[string]*job
	byUser map[string]int // parked jobs per user
}

func newJobTable() *jobTable { return &jobTable{jobs: map[string]*job{}, byUser: map[string]int{}} }

func (t *jobTable) park(j *job) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.jobs[j.token] == nil {
		t.byUser[j.user]++
	}
	t.jobs[j.token] = j
}

// parkedBy is how many of user's jobs are parked.
func (t *jobTable) parkedBy(user string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byUser[user]
}

// remove unparks j; t.mu is held.
func (t *jobTable) remove(j *job) {
	delete(t.jobs, j.token)
	if t.byUser[j.user]--; t.byUser[j.user] <= 0 {
		delete(t.byUser, j.user)
	}
}

// take removes and returns the parked job for token, only for its owner.
func (t *jobTable) take(token, user string) *job {
	t.mu.Lock()
	defer t.mu.Unlock()
	j := t.jobs[token]
	if j == nil || j.user != user || j.pending == nil {
		return nil
	}
	select {
	case <-j.gone: // its answer came too late: the job gave up on the client
		return nil
	default:
	}
	t.remove(j)
	return j
}

func (t *jobTable) drop(token string) {
	if token == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if j := t.jobs[token]; j != nil {
		t.remove(j)
	}
}

func newToken() string {
	return ids.Hex(16)
}
