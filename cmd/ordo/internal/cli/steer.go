package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/cmd/ordo/internal/app"
	"github.com/ordo-run/ordo/contracts"
)

// steerPoll is how often pause and cancel look at a run another process
// drives until it stops.
const steerPoll = 100 * time.Millisecond

func newRunsPauseCmd(g *globals) *cobra.Command {
	return newRunsSteerCmd(g, "pause", "Pause a run at its next step boundary (continue, edit or abort it with 'ordo runs resume')",
		`Ask RUN_ID to stop at its next step boundary (calls in flight finish and are recorded)
at a paused interrupt. 'ordo runs resume RUN_ID' then asks what to do: continue, edit the
remaining plan (e FILE: a plan whose actions already finished, same id and tool, are kept
and not run again), or abort (the run is cancelled).

A run nobody drives pauses at once. A run another process drives ('ordo serve', another
'ordo run') gets the request through the run store and stops within about a second plus
the steps in flight; pause waits up to --wait for that and prints where the run stands.
Exit codes: 0 once paused, 3 while the request is on its way; a finished run is error 3006.`,
		`  ordo runs pause run_0123abcd
  ordo runs pause run_0123abcd --wait 2m`,
		func(ap *app.App) func(context.Context, string, string) (*contracts.Run, error) {
			return ap.Engine.Pause
		},
		contracts.RunInterrupted)
}

func newRunsCancelCmd(g *globals) *cobra.Command {
	return newRunsSteerCmd(g, "cancel", "Cancel a run for good (status cancelled)",
		`End RUN_ID for good: status cancelled, error 4005. A run that waits for a person or that
nobody drives is cancelled at once; one another process drives stops at its next step
boundary (calls in flight finish and are recorded), as for pause. 'ordo runs retry RUN_ID'
forks a cancelled run from where it stopped. Exit codes: 0 once cancelled, 3 while the
request is on its way; a finished run is error 3006.`,
		`  ordo runs cancel run_0123abcd`,
		func(ap *app.App) func(context.Context, string, string) (*contracts.Run, error) {
			return ap.Engine.Cancel
		},
		contracts.RunCancelled)
}

// newRunsSteerCmd builds pause and cancel: ask, then wait for the run to
// stop where it was asked to.
func newRunsSteerCmd(g *globals, verb, short, long, example string,
	ask func(*app.App) func(context.Context, string, string) (*contracts.Run, error), want contracts.RunStatus) *cobra.Command {
	var asJSON bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use:               verb + " RUN_ID [--wait DURATION]",
		Short:             short,
		Long:              long,
		Example:           example,
		Args:              args(1, 1),
		ValidArgsFunction: g.completeRunID,
		RunE: func(cmd *cobra.Command, a []string) error {
			if wait < 0 {
				return usageError(fmt.Errorf("--wait must not be negative"))
			}
			return g.withApp(cmd, func(ap *app.App) error {
				ctx := cmd.Context()
				run, err := ask(ap)(ctx, a[0], LocalUser)
				if err != nil {
					return err
				}
				for deadline := time.Now().Add(wait); !stopped(run) && time.Now().Before(deadline); {
					select {
					case <-ctx.Done():
						return ctx.Err()
					case <-time.After(steerPoll):
					}
					if run, err = ap.Engine.Get(ctx, run.ID); err != nil {
						return err
					}
				}
				if stopped(run) && run.Status != want {
					// it stopped on its own first: the request must not stop it later
					if err := ap.Engine.ForgetRequests(ctx, run.ID); err != nil {
						return err
					}
				}
				if asJSON {
					if err := writeJSON(g.io.Out, run); err != nil {
						return err
					}
				}
				switch {
				case run.Status == want:
					fmt.Fprintf(g.io.Err, "run %s is %s", run.ID, run.Status)
					if run.Interrupt != nil {
						fmt.Fprintf(g.io.Err, " (%s): %s", run.Interrupt.Kind, g.again("runs", "resume", run.ID))
					}
					fmt.Fprintln(g.io.Err)
					return nil
				case !stopped(run):
					fmt.Fprintf(g.io.Err, "%s requested: run %s stops at its next step boundary\n", verb, run.ID)
				default:
					fmt.Fprintf(g.io.Err, "run %s is %s\n", run.ID, run.Status)
				}
				return &exitError{statusExit(run.Status)}
			})
		},
	}
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long to wait for a run another process drives to stop (0: do not wait)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run record as JSON on stdout")
	return cmd
}

// stopped: the run no longer runs (it waits for a person or ended).
func stopped(run *contracts.Run) bool {
	return run.Status != contracts.RunRunning && run.Status != contracts.RunPending && run.Status != contracts.RunReady
}

func newRunsRetryCmd(g *globals) *cobra.Command {
	var from string
	var yes, asJSON bool
	cmd := &cobra.Command{
		Use:   "retry RUN_ID [--from ACTION] [--yes]",
		Short: "Retry a failed or cancelled run from the step that failed (a fork)",
		Long: `Start a new run from a failed or cancelled RUN_ID, from the action that failed (the last
one that failed in its current plan, else the first that did not finish) or from --from
ACTION: the recorded results of the steps before it are reused, it and what depends on it
run again ('ordo runs fork'). RUN_ID is not changed. A run still waiting at a step_failed
interrupt is answered with 'ordo runs resume' instead. Exit codes as for 'ordo run'.`,
		Example: `  ordo runs retry run_0123abcd
  ordo runs retry run_0123abcd --from post_summary --yes`,
		Args:              args(1, 1),
		ValidArgsFunction: g.completeRunID,
		RunE: func(cmd *cobra.Command, a []string) error {
			req := agent.ForkRequest{RunID: a[0], FromAction: from, AutoApprove: yes, AutoApprovePolicy: yes}
			return g.withApp(cmd, func(ap *app.App) error {
				return g.drive(cmd.Context(), ap, asJSON, func(ctx context.Context) (*contracts.Run, error) {
					fmt.Fprintf(g.io.Err, "retrying %s: the recorded results of the steps before the failed one are reused\n", a[0])
					return ap.Engine.Retry(ctx, req)
				})
			})
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the action to run again from (default: the one that failed)")
	_ = cmd.RegisterFlagCompletionFunc("from", g.completeAction)
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "approve the new run's plan and steps without asking")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the new run's record as JSON on stdout (progress goes to stderr)")
	return cmd
}
