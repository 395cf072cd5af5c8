package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"mvdan.cc/sh/v3/syntax"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/cmd/ordo/internal/app"
	"github.com/ordo-run/ordo/cmd/ordo/internal/console"
	"github.com/ordo-run/ordo/contracts"
)

// LocalUser is who `ordo run` and `ordo runs resume` act as.
const LocalUser = "local"

func newRunCmd(g *globals) *cobra.Command {
	var planFile, template, session, extra string
	var inputs []string
	var yes, asJSON bool
	cmd := &cobra.Command{
		Use:   `run ["GOAL" | --plan FILE | --template NAME [--input ACTION.FIELD=VALUE]...]`,
		Short: "Plan and execute a goal, or execute a plan file, in the terminal",
		Long: `Run a goal (planned by the configured model) or a plan you wrote (no model needed),
showing the plan, each step's state and duration, and any interrupt. Interrupts are
answered on stdin: approve, edit, reject or skip a step, answer questions. If stdin ends
first, the run stays interrupted and 'ordo runs resume ID' continues it later. A GOAL
given with --plan is the run's request (its record's goal, what the filler and composer
read) instead of the plan's own goal.

--template runs a plan saved from a completed run ('ordo runs save-template RUN_ID NAME'),
no model needed, with literal inputs replaced by --input ACTION_ID.FIELD=VALUE (VALUE is
JSON when it parses as JSON, else text; FIELD may be a dotted path); a GOAL replaces the
template's goal.

--session NAME makes the run a turn of your conversation NAME: the planner, re-planner and
composer see its last 10 turns (goal and answer), so a follow-up such as "and tomorrow?"
reads as one ('ordo sessions show NAME' lists the turns). --context TEXT gives the models
extra facts, kept in the run (a clarification keeps it too); it needs a model.

Ctrl-C stops at the next step boundary and leaves a resumable run (press it again to quit
at once). Exit codes: 0 completed, 1 failed, 2 usage/config/plan-file error,
3 interrupted (resumable), 4 rejected, 5 cancelled.`,
		Example: `  ordo run --plan examples/first-run.plan.json --yes
  ordo run "Summarise sales.csv into a notes page and post the link to #general"
  ordo run --plan my.plan.json --json > run.json
  echo approve | ordo run --plan examples/first-run.plan.json
  ordo run --template q1-report --input read_sales.file=examples/data/sales.csv --yes
  ordo run --session trip "What is the weather in Seoul?"`,
		Args: args(0, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			var goal string
			if len(a) == 1 {
				goal = a[0]
			}
			var plan *contracts.Plan
			if planFile != "" {
				var err error
				if plan, err = g.readPlan(planFile); err != nil {
					return err
				}
			}
			if template != "" && planFile != "" {
				return usageError(errors.New("--plan and --template are two plans; give one"))
			}
			if len(inputs) > 0 && template == "" {
				return usageError(errors.New("--input sets a template's inputs: give --template NAME"))
			}
			in, err := parseInputs(inputs)
			if err != nil {
				return err
			}
			if strings.TrimSpace(goal) == "" && plan == nil && template == "" {
				return usageError(errors.New(`run needs a goal ("GOAL"), --plan FILE or --template NAME`))
			}
			return g.withApp(cmd, func(a2 *app.App) error {
				req := agent.Request{Goal: goal, Plan: plan, UserID: LocalUser, Session: session, Context: extra, Options: contracts.RunOptions{
					AutoApprove: yes, AutoApprovePolicy: yes, Scopes: a2.ScopesFor(LocalUser),
				}}
				if yes {
					fmt.Fprintln(g.io.Err, "--yes: approving what policy allows without asking (policy denials still stop the run)")
				}
				return g.drive(cmd.Context(), a2, asJSON, func(ctx context.Context) (*contracts.Run, error) {
					// The planner's call is a call in flight: Ctrl-C lets it
					// finish, so the run stops resumable with its plan rather
					// than failed (a second Ctrl-C still quits at once).
					ctx = context.WithoutCancel(ctx)
					if template != "" {
						return a2.Engine.PlanTemplate(ctx, agent.TemplateRequest{Name: template, UserID: LocalUser, Goal: goal, Inputs: in, Options: req.Options,
							Context: req.Context, Session: req.Session})
					}
					return a2.Engine.Plan(ctx, req)
				})
			})
		},
	}
	cmd.Flags().StringVar(&planFile, "plan", "", "execute this Action Plan (JSON; - reads it from stdin) instead of planning the goal")
	cmd.Flags().StringVar(&template, "template", "", "run the plan saved under this name (ordo runs save-template)")
	local := LocalUser
	_ = cmd.RegisterFlagCompletionFunc("template", g.completeTemplate(&local))
	cmd.Flags().StringArrayVar(&inputs, "input", nil, "with --template: ACTION_ID.FIELD=VALUE replacing a literal input (repeatable)")
	cmd.Flags().StringVar(&session, "session", "", "make the run a turn of your conversation NAME (ordo sessions list)")
	cmd.Flags().StringVar(&extra, "context", "", "extra facts for the planner, re-planner and composer (needs a model)")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "approve what policy allows without asking")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run record as JSON on stdout (progress goes to stderr)")
	return cmd
}

// readPlan reads the Action Plan of --plan: the file name, or stdin
// for "-" (a script's pipe; the run's questions then find stdin at its
// end, so such a run gives --yes or stops resumable).
func (g *globals) readPlan(name string) (*contracts.Plan, error) {
	data, err := g.readFile(name)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "plan file: %w", err).With("field", "plan")
	}
	plan, err := contracts.ParsePlan(data)
	if err != nil {
		return nil, contracts.AsError(err).With("file", name)
	}
	return plan, nil
}

// readFile reads the file name, or stdin for "-".
func (g *globals) readFile(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(g.io.In)
	}
	return os.ReadFile(name)
}

// drive starts a run with begin and takes it as far as it goes: executing
// ready runs, asking the person at each interrupt, until it ends, input
// ends or Ctrl-C. Then it reports and exits with the run's status code.
func (g *globals) drive(parent context.Context, a *app.App, asJSON bool, begin func(context.Context) (*contracts.Run, error)) error {
	return g.driveWith(parent, a, asJSON, begin, a.Engine.Resume)
}

// driveWith is drive with the person's decisions passed on by decide: a
// direct tool call gives its arguments again with each (Engine.Confirm).
func (g *globals) driveWith(parent context.Context, a *app.App, asJSON bool, begin func(context.Context) (*contracts.Run, error),
	decide func(context.Context, string, contracts.Decision) (*contracts.Run, error)) error {
	ctx, stop := interruptible(parent, g.io.Err)
	defer stop()
	disp := console.NewDisplay(g.io.Err, g.redraws())
	ctx = agent.WithEvents(ctx, disp.Event)
	prompt := console.NewPrompter(g.io.In, g.io.Err, LocalUser)

	run, err := begin(ctx)
	shown := 0
	for err == nil && run != nil && ctx.Err() == nil {
		// A direct tool call's one-action plan says nothing its steps do not.
		if n := len(run.Plans); n > 0 && run.Plans[n-1].Version != shown && !run.Options.Direct {
			disp.Plan(run)
			shown = run.Plans[n-1].Version
		}
		if run.Status == contracts.RunReady {
			run, err = a.Engine.Execute(ctx, run.ID)
			continue
		}
		if run.Status != contracts.RunInterrupted || run.Interrupt == nil {
			break
		}
		d, perr := prompt.Decide(ctx, run)
		if perr != nil {
			break // input ended or Ctrl-C: the run stays interrupted
		}
		d.Seq = run.Seq // the interrupt shown: refused if someone else answered it meanwhile
		next, rerr := decide(ctx, run.ID, d)
		if refusedDecision(rerr) && next != nil && next.Status == contracts.RunInterrupted && next.Interrupt != nil {
			// A refused decision (a bad edit, a missing answer) leaves the
			// run as it was: say why and ask again.
			fmt.Fprintf(g.io.Err, "  refused: %v\n", rerr)
			run = next
			continue
		}
		run, err = next, rerr
	}
	if run == nil {
		return err
	}
	if err != nil {
		printError(g.io.Err, err)
	}
	werr := g.report(a, run, disp, asJSON)
	if werr != nil {
		printError(g.io.Err, fmt.Errorf("the answer is not on stdout (%w); it is in the run record", werr))
	}
	if code := statusExit(run.Status); code != ExitCompleted {
		return &exitError{code}
	}
	if err != nil || werr != nil {
		return &exitError{ExitFailed}
	}
	return nil
}

// redraws says whether stderr is a terminal that can redraw a line (the
// spinner's "\r\x1b[K"): not under TERM=dumb (an editor's shell, a CI
// log on a pseudo-terminal), which prints the escapes as they are.
func (g *globals) redraws() bool {
	term, _ := g.io.Env("TERM")
	return isTerminal(g.io.Err) && term != "dumb"
}

// refusedDecision: the decision itself was wrong (it does not fit, an edit
// breaks the plan or the contract), so the person can try again.
func refusedDecision(err error) bool {
	code := contracts.CodeOf(err)
	return err != nil && (code/1000 == 1 || code == contracts.CodeInvalidDecision)
}

// report prints the answer (or the record as JSON) on stdout and where to
// find things on stderr. A direct tool call's answer is the tool's result.
// It returns why stdout took no answer (a full disk): a script must not
// read exit 0 as "the record is in run.json".
func (g *globals) report(a *app.App, run *contracts.Run, disp *console.Display, asJSON bool) error {
	disp.Summary(run)
	var err error
	switch {
	case asJSON:
		err = writeJSON(g.io.Out, run)
	case run.Options.Direct:
		if result := lastResult(run); result != nil {
			err = writeJSON(g.io.Out, result)
		}
	case run.Result != nil && run.Result.Answer != "":
		_, err = fmt.Fprintln(g.io.Out, run.Result.Answer)
	}
	w := g.io.Err
	fmt.Fprintf(w, "run record: %s", g.again("runs", "show", run.ID))
	if !a.Config.IsPostgres() {
		fmt.Fprintf(w, "   (store %s)", a.Config.DatabasePath())
	}
	fmt.Fprintln(w)
	for _, where := range outputs(a, run) {
		fmt.Fprintln(w, where)
	}
	if !run.Status.Final() {
		fmt.Fprintf(w, "the run is %s; continue it with: %s\n", run.Status, g.again("runs", "resume", run.ID))
	}
	return err
}

// again is the ordo command line args with the --config, --data-dir and
// --store this one was given, quoted for a shell, so a next step printed
// works as printed (a store URL, which may hold a password, shows as …).
func (g *globals) again(args ...string) string {
	var line []string
	if g.configPath != "" {
		line = append(line, "--config", g.configPath)
	}
	if g.dataDir.set {
		line = append(line, "--data-dir", g.dataDir.value)
	}
	line = append(line, args...)
	if g.store.set {
		store := g.store.value
		if store != "embedded" {
			store = "…"
		}
		line = append(line, "--store", store)
	}
	out := "ordo"
	for _, word := range line {
		if q, err := syntax.Quote(word, syntax.LangBash); err == nil && word != "…" {
			word = q
		}
		out += " " + word
	}
	return out
}

// lastResult is the result of the run's last succeeded step, if any.
func lastResult(run *contracts.Run) json.RawMessage {
	for i := len(run.Steps) - 1; i >= 0; i-- {
		if s := run.Steps[i]; s.Status == contracts.StepSucceeded {
			return s.Result
		}
	}
	return nil
}

// outputs says where the bundled plugins put what the run's steps wrote:
// the chat outbox (channels/NAME.jsonl) and the notes store.
func outputs(a *app.App, run *contracts.Run) []string {
	var out []string
	for _, s := range run.Steps {
		if s.Status != contracts.StepSucceeded {
			continue
		}
		var where string
		switch s.Tool {
		case "chat.post_message":
			var r struct{ Channel, Delivery string }
			if json.Unmarshal(s.Result, &r) != nil || r.Delivery != "outbox" {
				continue
			}
			where = "chat outbox: " + filepath.Join(app.PluginDataDir(a.Config, "chat"), "channels", strings.TrimPrefix(r.Channel, "#")+".jsonl")
		case "notes.create_page", "notes.append_block":
			where = "notes store: " + filepath.Join(app.PluginDataDir(a.Config, "notes"), "notes.json")
		}
		if where != "" && !slices.Contains(out, where) {
			out = append(out, where)
		}
	}
	return out
}

// interruptible returns a context cancelled by the first SIGINT or
// SIGTERM (the engine then stops at the next step boundary); a second one
// exits at once, leaving the run resumable from its last checkpoint.
func interruptible(parent context.Context, w interface{ Write([]byte) (int, error) }) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			fmt.Fprintln(w, "\nstopping at the next step boundary (Ctrl-C again to quit now)")
			cancel()
		case <-done:
			return
		}
		select {
		case <-sigs:
			fmt.Fprintln(w, "quitting; the run resumes from its last checkpoint")
			os.Exit(ExitInterrupted)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}
