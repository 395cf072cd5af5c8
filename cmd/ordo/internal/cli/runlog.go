package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/cmd/ordo/internal/app"
	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/mcpserver"
	"github.com/ordo-run/ordo/memory"
)

// The commands on a run's append-only log: fork, replay, events, compact.

func newRunsForkCmd(g *globals) *cobra.Command {
	var from, planFile string
	var yes, asJSON bool
	cmd := &cobra.Command{
		Use:   "fork RUN_ID --from ACTION [--plan FILE] [--yes]",
		Short: "Start a new run from a recorded one, running ACTION and what depends on it again",
		Long: `Start a new run that takes the recorded results of RUN_ID's steps before ACTION (no
tool or model is called for them), then runs ACTION and every action that depends on it,
directly or not. This is how a failed run is retried from the step that failed, once the
cause is fixed. The forked run is read, never changed; the new run keeps its goal, user,
scopes and options, and is driven in the terminal as 'ordo run' drives a run: its plan,
each step, and any interrupt, answered on stdin.

--plan FILE gives the new run an edited plan (validated as its first plan version against
the state taken over); ACTION must still be an action of RUN_ID's current plan. --yes
approves what configuration and policy ask to confirm, as 'ordo run --yes' does (policy
denials still stop it); a fork never inherits that from the run it forks. Exit codes as for 'ordo run'; an ACTION not in the plan is error 1000 (exit 2), and so
is a run still running (pause it first, or resume it if its process died: the call it was
making would run again in the fork under another idempotency key).`,
		Example: `  ordo runs fork run_0123abcd --from post_summary
  ordo runs fork run_0123abcd --from post_summary --yes --json > run.json
  ordo runs fork run_0123abcd --from summarise --plan fixed.plan.json`,
		Args:              args(1, 1),
		ValidArgsFunction: g.completeRunID,
		RunE: func(cmd *cobra.Command, a []string) error {
			if from == "" {
				return usageError(errors.New("fork needs --from ACTION: the first action to run again"))
			}
			req := agent.ForkRequest{RunID: a[0], FromAction: from, AutoApprove: yes, AutoApprovePolicy: yes}
			if planFile != "" {
				var err error
				if req.Plan, err = g.readPlan(planFile); err != nil {
					return err
				}
			}
			return g.withApp(cmd, func(ap *app.App) error {
				if yes {
					fmt.Fprintln(g.io.Err, "--yes: approving what configuration and policy ask to confirm, as 'ordo run --yes' does (policy denials still stop the run)")
				}
				return g.drive(cmd.Context(), ap, asJSON, func(ctx context.Context) (*contracts.Run, error) {
					fmt.Fprintf(g.io.Err, "forking %s from action %s: the recorded results of the steps before it are reused\n", a[0], from)
					return ap.Engine.Fork(ctx, req)
				})
			})
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the action of the run's current plan to run again (required)")
	_ = cmd.RegisterFlagCompletionFunc("from", g.completeAction)
	cmd.Flags().StringVar(&planFile, "plan", "", "an edited Action Plan (JSON; - reads it from stdin) for the new run")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "approve the new run's plan and steps without asking")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the new run's record as JSON on stdout (progress goes to stderr)")
	return cmd
}

func newRunsReplayCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "replay RUN_ID",
		Short: "Print a run rebuilt from its log, entry by entry, and check it against the stored run",
		Long: `Read RUN_ID's append-only log and print each entry — its sequence number (the cursor),
time, kind (created, plan, step, decision, interrupted, snapshot, or the status it set)
and what it changed — then fold the entries into the run and check that the result is
the stored run. Nothing is called: no tool, no model. A compacted run replays from its
snapshot. A run being written right now replays as it was when the replay read it (entries
appended meanwhile are left for the next replay). --json prints the entries instead, as the events resource does:
{run_id, events: [{seq, kind, summary, at, entry}], next, status}.

Exit code 0 when the fold equals the stored run; 1 with error 3005 when it does not.`,
		Example: `  ordo runs replay run_0123abcd
  ordo runs replay run_0123abcd --json | jq '.events[] | select(.kind == "step") | .summary'`,
		Args:              args(1, 1),
		ValidArgsFunction: g.completeRunID,
		RunE: func(cmd *cobra.Command, a []string) error {
			return g.withStore(cmd.Context(), func(_ *config.Config, st memory.Checkpointer) error {
				ctx := cmd.Context()
				entries, folded, err := memory.Replay(ctx, st, a[0])
				if entries == nil {
					return err
				}
				if asJSON {
					if err := writeJSON(g.io.Out, eventsPage(a[0], 0, entries, "")); err != nil {
						return err
					}
				} else {
					fmt.Fprintf(g.io.Out, "replay of %s: %d log entries\n", a[0], len(entries))
					for i := range entries {
						printEntry(g.io.Out, &entries[i])
					}
				}
				if err != nil {
					return err
				}
				w := g.io.Out
				if asJSON {
					w = g.io.Err
				}
				_, err = fmt.Fprintf(w, "ok: the run rebuilt from its %d log entries equals the stored run (seq %d, %s, %d step record(s), %d plan version(s))\n",
					len(entries), folded.Seq, folded.Status, len(folded.Steps), len(folded.Plans))
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the log entries as JSON on stdout (the check goes to stderr)")
	return cmd
}

// printEntry prints one log entry for people: seq, time, kind, summary.
func printEntry(w io.Writer, d *contracts.RunDelta) {
	v := mcpserver.NewEventView(d)
	fmt.Fprintf(w, "%5d  %s  %-12s %s\n", v.Seq, v.At.Local().Format("2006-01-02 15:04:05.000"), v.Kind, v.Summary)
}

// eventsPage is entries as the events resource pages them.
func eventsPage(runID string, after int64, entries []contracts.RunDelta, status contracts.RunStatus) *mcpserver.EventsPage {
	p := &mcpserver.EventsPage{RunID: runID, Events: make([]mcpserver.EventView, 0, len(entries)), Next: after, Status: status}
	for i := range entries {
		p.Events = append(p.Events, mcpserver.NewEventView(&entries[i]))
		p.Next, p.Status = entries[i].Seq, mcpserver.EntryStatus(&entries[i])
	}
	return p
}

// followPoll is how often `runs events --follow` reads the log again.
const followPoll = 500 * time.Millisecond

func newRunsEventsCmd(g *globals) *cobra.Command {
	var after int64
	var follow, asJSON bool
	cmd := &cobra.Command{
		Use:   "events RUN_ID [--after N] [--follow]",
		Short: "Print a run's log entries after a cursor, and with --follow, as they come",
		Long: `Print the entries of RUN_ID's log whose sequence number is greater than --after (default:
all): seq, time, kind and what changed. The last seq printed is the cursor to pass as
--after next time, so a reader that stops and starts again loses and repeats nothing
(the cursor is also printed on stderr at the end). --follow keeps reading the store
every 500 ms, so runs driven by any process sharing the store are followed, until the
run is final (completed, failed, rejected or cancelled) or Ctrl-C.

--json prints one JSON object per line, as the events resource and the HTTP stream
(GET /runs/ID/events on 'ordo serve --http') describe entries: {seq, kind, summary, at, entry}.`,
		Example: `  ordo runs events run_0123abcd
  ordo runs events run_0123abcd --after 12 --follow
  ordo runs events run_0123abcd --follow --json | jq -c '{seq, kind}'`,
		Args:              args(1, 1),
		ValidArgsFunction: g.completeRunID,
		RunE: func(cmd *cobra.Command, a []string) error {
			if after < 0 {
				return usageError(fmt.Errorf("--after must be a sequence number >= 0, got %d", after))
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return g.withStore(ctx, func(_ *config.Config, st memory.Checkpointer) error {
				run, err := st.Load(ctx, a[0])
				if err != nil {
					return err
				}
				if err := mcpserver.CheckCursor(run, "after", after); err != nil {
					return err
				}
				status := run.Status
				enc := json.NewEncoder(g.io.Out)
				for {
					entries, err := st.Log(ctx, a[0], after, 0)
					if err != nil {
						if ctx.Err() != nil {
							break
						}
						return err
					}
					for i := range entries {
						d := &entries[i]
						if asJSON {
							if err := enc.Encode(mcpserver.NewEventView(d)); err != nil {
								return err
							}
						} else {
							printEntry(g.io.Out, d)
						}
						after, status = d.Seq, mcpserver.EntryStatus(d)
					}
					if !follow || status.Final() {
						break
					}
					select {
					case <-ctx.Done():
					case <-time.After(followPoll):
					}
					if ctx.Err() != nil {
						break
					}
				}
				if status.Final() {
					_, err = fmt.Fprintf(g.io.Err, "cursor %d: the run is %s, nothing more will come\n", after, status)
				} else {
					_, err = fmt.Fprintf(g.io.Err, "cursor %d (run %s); continue with: %s\n", after, status, g.again("runs", "events", a[0], "--after", strconv.FormatInt(after, 10)))
				}
				return err
			})
		},
	}
	cmd.Flags().Int64Var(&after, "after", 0, "print only entries with a greater sequence number (a cursor)")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing entries as they are stored until the run is final")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per entry")
	return cmd
}

func newRunsCompactCmd(g *globals) *cobra.Command {
	var olderThan time.Duration
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "compact [--older-than DURATION]",
		Short: "Fold the logs of finished runs into one snapshot each",
		Long: `Fold the append-only log of each finished run (completed, failed, rejected, cancelled)
into one whole-run entry at its last sequence number, so the store keeps one record per
run. The runs load, show and replay the same afterwards; 'ordo runs events' then starts
from the snapshot. Unfinished runs are never compacted. By default every finished run
is; --older-than keeps the step-by-step log of runs updated more recently. 'ordo serve'
compacts finished runs at start and daily.`,
		Example: `  ordo runs compact
  ordo runs compact --older-than 24h`,
		Args: args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if olderThan < 0 {
				return usageError(fmt.Errorf("--older-than must not be negative, got %s", olderThan))
			}
			return g.withStore(cmd.Context(), func(_ *config.Config, st memory.Checkpointer) error {
				n, err := st.Compact(cmd.Context(), time.Now().Add(-olderThan))
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(g.io.Out, map[string]any{"compacted": n, "older_than": olderThan.String()})
				}
				if olderThan > 0 {
					_, err = fmt.Fprintf(g.io.Out, "compacted %d finished run(s) older than %s\n", n, olderThan)
				} else {
					_, err = fmt.Fprintf(g.io.Out, "compacted %d finished run(s)\n", n)
				}
				return err
			})
		},
	}
	cmd.Flags().DurationVar(&olderThan, "older-than", 0, "compact only runs last updated longer ago than this, e.g. 72h (default: every finished run)")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"compacted": N, "older_than": D}`)
	return cmd
}
