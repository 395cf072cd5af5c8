package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordo-run/ordo/cmd/ordo/internal/app"
	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

func newRunsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List, show, resume, fork, replay, follow, compact and prune stored runs, and save one as a template",
		Long: `Runs are stored as append-only logs: each step boundary appends an entry numbered by the
run's sequence (the cursor). show prints a run; replay prints it rebuilt from its log
entry by entry; events prints (and --follow follows) the entries after a cursor; fork
starts a new run from a recorded one, from one action on; compact folds finished runs'
logs into one snapshot each; prune deletes finished runs.`,
		Example: `  ordo runs list --status interrupted
  ordo runs show run_0123abcd --json
  ordo runs resume run_0123abcd
  ordo runs fork run_0123abcd --from post_summary
  ordo runs replay run_0123abcd
  ordo runs events run_0123abcd --after 12 --follow
  ordo runs compact
  ordo runs prune --older-than 168h
  ordo runs save-template run_0123abcd q1-report`,
	}
	cmd.AddCommand(newRunsListCmd(g), newRunsShowCmd(g), newRunsResumeCmd(g), newRunsForkCmd(g), newRunsReplayCmd(g),
		newRunsEventsCmd(g), newRunsCompactCmd(g), newRunsPruneCmd(g), newRunsSaveTemplateCmd(g))
	return cmd
}

// withStore opens just the run store (no plugins) for fn.
func (g *globals) withStore(ctx context.Context, fn func(*config.Config, memory.Checkpointer) error) error {
	cfg, _, err := g.load()
	if err != nil {
		return err
	}
	st, err := app.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(cfg, st)
}

func newRunsListCmd(g *globals) *cobra.Command {
	var statuses []string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List runs, newest first",
		Example: `  ordo runs list
  ordo runs list --status interrupted --status ready --limit 20 --json`,
		Args: args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := memory.Filter{Limit: limit}
			for _, s := range statuses {
				f.Status = append(f.Status, contracts.RunStatus(s))
			}
			return g.withStore(cmd.Context(), func(_ *config.Config, st memory.Checkpointer) error {
				rows, err := st.List(cmd.Context(), f)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(g.io.Out, rows)
				}
				tw := tabwriter.NewWriter(g.io.Out, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tSTATUS\tUPDATED\tGOAL")
				for _, r := range rows {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, r.Status, r.UpdatedAt.Local().Format(time.DateTime), clip(r.Goal, 60))
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().StringSliceVar(&statuses, "status", nil, "only runs in this status (repeatable): pending, ready, running, interrupted, completed, failed, rejected, cancelled")
	cmd.Flags().IntVar(&limit, "limit", 50, "at most this many runs (0: all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newRunsShowCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show RUN_ID",
		Short: "Show a run's record: plan, policy, steps, decisions, answer",
		Example: `  ordo runs show run_0123abcd
  ordo runs show run_0123abcd --json | jq '.steps[] | {action_id, status}'`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			return g.withStore(cmd.Context(), func(_ *config.Config, st memory.Checkpointer) error {
				run, err := st.Load(cmd.Context(), a[0])
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(g.io.Out, run)
				}
				showRun(g.io.Out, run)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the whole record as JSON")
	return cmd
}

// showRun prints a run record for people.
func showRun(w io.Writer, run *contracts.Run) {
	fmt.Fprintf(w, "run      %s\nstatus   %s\ngoal     %s\nuser     %s\ncreated  %s\nupdated  %s (checkpoint %d)\n",
		run.ID, run.Status, run.Goal, run.UserID, run.CreatedAt.Local().Format(time.DateTime), run.UpdatedAt.Local().Format(time.DateTime), run.Seq)
	if n := len(run.Plans); n > 0 {
		rev := run.Plans[n-1]
		fmt.Fprintf(w, "plan     v%d of %d (%s)\n", rev.Version, n, rev.Source)
		for _, a := range rev.Plan.Actions {
			fmt.Fprintf(w, "  %-18s %-22s %s\n", a.ID, a.Tool, run.Policy[a.ID].Decision)
		}
	}
	if len(run.Steps) > 0 {
		fmt.Fprintln(w, "steps")
		for _, s := range run.Steps {
			took := ""
			if !s.EndedAt.IsZero() {
				took = s.EndedAt.Sub(s.StartedAt).Round(100 * time.Microsecond).String()
			}
			line := fmt.Sprintf("  %-18s %-22s #%d %-9s %s", s.ActionID, s.Tool, s.Attempt, s.Status, took)
			if s.Error != nil {
				line += fmt.Sprintf("  error %d: %s", s.Error.Code, clip(s.Error.Message, 80))
			}
			fmt.Fprintln(w, line)
		}
	}
	for _, d := range run.Decisions {
		fmt.Fprintf(w, "decision %s -> %s by %s at %s\n", d.Interrupt.Kind, d.Decision.Kind, d.Decision.By, d.At.Local().Format(time.DateTime))
	}
	if run.Interrupt != nil {
		fmt.Fprintf(w, "waiting  %s: %s\n", run.Interrupt.Kind, run.Interrupt.Message)
	}
	if len(run.LLMCalls) > 0 {
		fmt.Fprintf(w, "llm      %v\n", run.LLMCalls)
	}
	if run.Error != nil {
		fmt.Fprintf(w, "error    %d (%s): %s\n", run.Error.Code, run.Error.Code.Category(), run.Error.Message)
	}
	if run.Result != nil {
		fmt.Fprintf(w, "answer   (%s)\n%s\n", run.Result.Composer, run.Result.Answer)
	}
}

func newRunsResumeCmd(g *globals) *cobra.Command {
	var asJSON, wait bool
	cmd := &cobra.Command{
		Use:   "resume RUN_ID [--wait]",
		Short: "Continue an interrupted or stopped run, answering its interrupts on stdin",
		Long: `Continue a run that waits for a person (its interrupt is asked again), that Ctrl-C
stopped, or whose process died mid-run (a call in flight is re-issued with the same
idempotency key). Exit codes as for 'ordo run'.

A run another server (or 'ordo run') drives is refused with error 3004, saying who holds
it and for how many more seconds; a server that died holds it until its lease runs out
(lease_ttl). With --wait, resume waits until the lease runs out or is released (or
Ctrl-C), then continues the run.`,
		Example: `  ordo runs resume run_0123abcd
  echo approve | ordo runs resume run_0123abcd --json
  ordo runs resume run_0123abcd --wait`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			return g.withApp(cmd, func(ap *app.App) error {
				return g.drive(cmd.Context(), ap, asJSON, func(ctx context.Context) (*contracts.Run, error) {
					waited := false
					for {
						run, err := resume(ctx, ap, a[0])
						if err = g.leaseHeld(ctx, err, wait, &waited); err != nil || run != nil {
							return run, err
						}
					}
				})
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run record as JSON on stdout")
	cmd.Flags().BoolVar(&wait, "wait", false, "if another server holds the run, wait for its lease to run out or be released")
	return cmd
}

// resume continues run id as far as it goes without a person: it first
// makes sure no other server drives the run (before an interrupt is asked
// again), then continues a run whose process died.
func resume(ctx context.Context, ap *app.App, id string) (*contracts.Run, error) {
	if err := ap.Engine.TryLease(ctx, id); err != nil {
		return nil, err
	}
	run, err := ap.Engine.Get(ctx, id)
	switch {
	case err != nil:
		return nil, err
	case run.Status.Final():
		return nil, contracts.Errorf(contracts.CodeRunAlreadyFinished, "run %s is %s; there is nothing to resume", run.ID, run.Status).With("run", run.ID)
	case run.Status == contracts.RunRunning, run.Status == contracts.RunPending && len(run.Plans) > 0:
		// its process died mid-run, or after checkpointing the plan
		return ap.Engine.Resume(ctx, run.ID, contracts.Decision{})
	}
	return run, nil // interrupted (asked again) or ready (executed)
}

// leasePoll is how often `runs resume --wait` looks again at a held run,
// so a released lease is noticed within it.
const leasePoll = time.Second

// leaseHeld handles another server's hold on the run (CodeLeaseHeld; any
// other err passes through). Without --wait it says how to wait. With it,
// it says once that it waits, sleeps until the lease runs out or the next
// look, whichever comes first, and returns nil to try again; Ctrl-C ends
// the wait with the held error.
func (g *globals) leaseHeld(ctx context.Context, err error, wait bool, waited *bool) error {
	var ce *contracts.Error
	if !errors.As(err, &ce) || ce.Code != contracts.CodeLeaseHeld {
		return err
	}
	if !wait {
		hint := contracts.Errorf(ce.Code, "%s; use --wait to wait for it", ce.Message)
		hint.Details = ce.Details
		return hint
	}
	if !*waited {
		*waited = true
		fmt.Fprintf(g.io.Err, "ordo: %s; waiting for it (Ctrl-C to stop)\n", ce.Message)
	}
	d := leasePoll
	if ms, _ := ce.Details["expires_in_ms"].(int64); ms > 0 {
		d = min(d, time.Duration(ms)*time.Millisecond)
	}
	select {
	case <-ctx.Done():
		return err
	case <-time.After(d):
		return nil
	}
}

func newRunsPruneCmd(g *globals) *cobra.Command {
	var olderThan time.Duration
	cmd := &cobra.Command{
		Use:   "prune [--older-than DURATION]",
		Short: "Delete finished runs last updated before a cut-off",
		Long: `Delete completed, failed, rejected and cancelled runs last updated longer ago than
--older-than (default: retention.runs). Unfinished runs are never pruned.`,
		Example: `  ordo runs prune
  ordo runs prune --older-than 24h`,
		Args: args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withStore(cmd.Context(), func(cfg *config.Config, st memory.Checkpointer) error {
				if !cmd.Flags().Changed("older-than") {
					olderThan = cfg.Retention.Runs
				}
				if olderThan <= 0 {
					return usageError(fmt.Errorf("--older-than must be a positive duration (retention.runs is %s)", cfg.Retention.Runs))
				}
				n, err := st.Prune(cmd.Context(), time.Now().Add(-olderThan))
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(g.io.Out, "pruned %d finished run(s) older than %s\n", n, olderThan)
				return err
			})
		},
	}
	cmd.Flags().DurationVar(&olderThan, "older-than", 0, "age cut-off, e.g. 72h (default retention.runs)")
	return cmd
}

func newRunsSaveTemplateCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "save-template RUN_ID NAME",
		Short: "Save a completed run's plan as a template of its user, to run again with new inputs",
		Long: `Save the plan a completed run finished with under NAME, in the pattern memory of the
run's user (replacing a template of the same name). 'ordo run --template NAME' runs it
again without a model; 'ordo memory list --namespace workflow' lists templates and
'ordo memory forget --template NAME' deletes one. Needs memory.enabled.`,
		Example: `  ordo runs save-template run_0123abcd q1-report
  ordo run --template q1-report --input read_sales.file=examples/data/sales.csv --yes`,
		Args: args(2, 2),
		RunE: func(cmd *cobra.Command, a []string) error {
			return g.withApp(cmd, func(ap *app.App) error {
				if err := ap.Engine.SaveTemplate(cmd.Context(), a[0], a[1]); err != nil {
					return err
				}
				run, err := ap.Engine.Get(cmd.Context(), a[0])
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(g.io.Out, "saved the plan of %s as template %q of user %q (%d actions)\n", run.ID, a[1], run.UserID, len(run.Plans[len(run.Plans)-1].Plan.Actions))
				return err
			})
		},
	}
	return cmd
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}
