package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordo-run/ordo/cmd/ordo/internal/app"
	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/cmd/ordo/internal/console"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

func newRunsCmd(g *globals) *cobra.Command {
	return group(&cobra.Command{
		Use:   "runs",
		Short: "List, show, resume, pause, cancel, retry, fork, replay, follow, compact, prune and delete stored runs, and save one as a template",
		Long: `Runs are stored as append-only logs: each step boundary appends an entry numbered by the
run's sequence (the cursor). show prints a run; replay prints it rebuilt from its log
entry by entry; events prints (and --follow follows) the entries after a cursor; fork
starts a new run from a recorded one, from one action on; compact folds finished runs'
logs into one snapshot each; prune deletes finished runs; delete deletes the runs it names.`,
		Example: `  ordo runs list --status interrupted
  ordo runs show run_0123abcd --json
  ordo runs resume run_0123abcd
  ordo runs pause run_0123abcd
  ordo runs cancel run_0123abcd
  ordo runs retry run_0123abcd
  ordo runs fork run_0123abcd --from post_summary
  ordo runs replay run_0123abcd
  ordo runs events run_0123abcd --after 12 --follow
  ordo runs compact
  ordo runs prune --older-than 168h
  ordo runs delete run_0123abcd run_4567cdef
  ordo runs save-template run_0123abcd q1-report`,
	}, newRunsListCmd(g), newRunsShowCmd(g), newRunsResumeCmd(g), newRunsForkCmd(g), newRunsReplayCmd(g),
		newRunsEventsCmd(g), newRunsCompactCmd(g), newRunsPruneCmd(g), newRunsDeleteCmd(g), newRunsSaveTemplateCmd(g),
		newRunsPauseCmd(g), newRunsCancelCmd(g), newRunsRetryCmd(g))
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
			if limit > 0 {
				f.Limit++ // one more says whether there are more
			}
			for _, s := range statuses {
				if !slices.Contains(runStatuses, s) { // else "(no runs)", as if none matched
					return usageError(fmt.Errorf("--status %q: want one of %s", s, strings.Join(runStatuses, ", ")))
				}
				f.Status = append(f.Status, contracts.RunStatus(s))
			}
			return g.withStore(cmd.Context(), func(_ *config.Config, st memory.Checkpointer) error {
				rows, err := st.List(cmd.Context(), f)
				if err != nil {
					return err
				}
				if limit > 0 && len(rows) > limit {
					rows = rows[:limit]
					// On stderr, so stdout stays the table or the JSON.
					defer fmt.Fprintf(g.io.Err, "more runs than the %d shown: --limit N shows N, --limit 0 all\n", limit)
				}
				if asJSON {
					if rows == nil {
						rows = []memory.RunSummary{}
					}
					return writeJSON(g.io.Out, rows)
				}
				tw := tabwriter.NewWriter(g.io.Out, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tSTATUS\tUSER\tUPDATED\tGOAL")
				for _, r := range rows {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.Status, orDash(r.UserID), r.UpdatedAt.Local().Format(time.DateTime), console.Clip(r.Goal, 60))
				}
				if len(rows) == 0 {
					fmt.Fprintln(tw, "(no runs)")
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().StringSliceVar(&statuses, "status", nil, "only runs in this status (repeatable): pending, ready, running, interrupted, completed, failed, rejected, cancelled")
	_ = cmd.RegisterFlagCompletionFunc("status", completeWords(runStatuses...))
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
		Args:              args(1, 1),
		ValidArgsFunction: g.completeRunID,
		RunE: func(cmd *cobra.Command, a []string) error {
			return g.withStore(cmd.Context(), func(_ *config.Config, st memory.Checkpointer) error {
				run, err := st.Load(cmd.Context(), a[0])
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(g.io.Out, run)
				}
				return showRun(g.io.Out, run)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the whole record as JSON")
	return cmd
}

// showRun prints a run record for people: what it is, then one row per
// action with its final status, attempts and duration, the decisions
// people made, and the answer.
func showRun(w io.Writer, run *contracts.Run) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "run\t%s\n", run.ID)
	fmt.Fprintf(tw, "status\t%s\n", run.Status)
	fmt.Fprintf(tw, "goal\t%s\n", console.Clip(run.Goal, 200))
	fmt.Fprintf(tw, "user\t%s\n", run.UserID)
	fmt.Fprintf(tw, "created\t%s\n", run.CreatedAt.Local().Format(time.DateTime))
	fmt.Fprintf(tw, "updated\t%s (checkpoint %d)\n", run.UpdatedAt.Local().Format(time.DateTime), run.Seq)
	if n := len(run.Plans); n > 0 {
		fmt.Fprintf(tw, "plan\tv%d of %d (%s)\n", run.Plans[n-1].Version, n, run.Plans[n-1].Source)
	}
	if len(run.LLMCalls) > 0 {
		fmt.Fprintf(tw, "llm calls\t%s\n", llmCalls(run.LLMCalls))
	}
	if u := run.Usage.Total; len(run.Usage.ByRole) > 0 {
		fmt.Fprintf(tw, "tokens\t%d in (%d cached), %d out  %s\n", u.InputTokens, u.CachedTokens, u.OutputTokens, strings.Join(u.Models, ", "))
		fmt.Fprintf(tw, "cost\t$%.6f\n", u.CostUSD)
	}
	if run.Interrupt != nil {
		fmt.Fprintf(tw, "waiting\t%s: %s\n", run.Interrupt.Kind, console.Clip(run.Interrupt.Message, 120))
		console.ContractChanges(tw, "changed\t", run.Interrupt.Changes)
	}
	if run.Error != nil {
		fmt.Fprintf(tw, "error\t%d (%s): %s\n", run.Error.Code, run.Error.Code.Category(), console.Clip(run.Error.Message, 160))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if rows := stepRows(run); len(rows) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ACTION\tTOOL\tPOLICY\tSTATUS\tATTEMPTS\tDURATION\tERROR")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.action, r.tool, orDash(r.policy), r.status, r.attempts, orDash(r.took), r.err)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(run.Decisions) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "INTERRUPT\tDECISION\tBY\tAT\tNOTE")
		for _, d := range run.Decisions {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.Interrupt.Kind, d.Decision.Kind, d.Decision.By, d.At.Local().Format(time.DateTime), console.Clip(d.Decision.Note, 60))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if run.Result != nil {
		_, err := fmt.Fprintf(w, "\nanswer (%s):\n%s\n", run.Result.Composer, run.Result.Answer)
		return err
	}
	return nil
}

// stepRow is one action of a run as `runs show` prints it.
type stepRow struct {
	action, tool, policy, status, attempts, took, err string
}

// stepRows folds the run's step records (a started and an ended record per
// attempt) into one row per action: the current plan's actions in plan
// order (those not reached yet "not started", the one an interrupt waits
// at "waiting"), then actions only an earlier plan version had. A row's
// duration runs from its first attempt's start to its last attempt's end.
func stepRows(run *contracts.Run) []stepRow {
	var order []string
	rows := map[string]*stepRow{}
	add := func(id, tool string) *stepRow {
		if r, ok := rows[id]; ok {
			return r
		}
		r := &stepRow{action: id, tool: tool, status: "not started", attempts: "0"}
		rows[id] = r
		order = append(order, id)
		return r
	}
	if n := len(run.Plans); n > 0 {
		for _, a := range run.Plans[n-1].Plan.Actions {
			add(a.ID, a.Tool).policy = run.Policy[a.ID].Decision
		}
	}
	first := map[string]time.Time{}
	for _, s := range run.Steps {
		r := add(s.ActionID, s.Tool)
		r.tool, r.status, r.attempts, r.err = s.Tool, string(s.Status), fmt.Sprint(s.Attempt), ""
		if _, ok := first[s.ActionID]; !ok {
			first[s.ActionID] = s.StartedAt
		}
		if !s.EndedAt.IsZero() {
			r.took = roundDuration(s.EndedAt.Sub(first[s.ActionID])).String()
		}
		if s.Error != nil {
			r.err = fmt.Sprintf("%d: %s", s.Error.Code, console.Clip(s.Error.Message, 80))
		}
	}
	if in := run.Interrupt; in != nil && in.ActionID != "" {
		if r, ok := rows[in.ActionID]; ok {
			r.status = "waiting (" + string(in.Kind) + ")"
		}
	}
	out := make([]stepRow, len(order))
	for i, id := range order {
		out[i] = *rows[id]
	}
	return out
}

// roundDuration keeps a duration's three leading digits or so: 4.4ms,
// 282ms, 1.255s.
func roundDuration(d time.Duration) time.Duration {
	if d >= 10*time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Microsecond)
}

// llmRoles is the order a run's model calls are listed in: the order a
// run makes them.
var llmRoles = []string{"planner", "filler", "verifier", "replanner", "composer", "tool"}

// llmCalls lists model calls by role for people: "planner 1, composer 1".
func llmCalls(calls map[string]int) string {
	var parts []string
	for _, r := range llmRoles {
		if n, ok := calls[r]; ok {
			parts = append(parts, fmt.Sprintf("%s %d", r, n))
		}
	}
	for _, r := range slices.Sorted(maps.Keys(calls)) {
		if !slices.Contains(llmRoles, r) {
			parts = append(parts, fmt.Sprintf("%s %d", r, calls[r]))
		}
	}
	return strings.Join(parts, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
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
		Args:              args(1, 1),
		ValidArgsFunction: g.completeRunID,
		RunE: func(cmd *cobra.Command, a []string) error {
			return g.withApp(cmd, func(ap *app.App) error {
				return g.drive(cmd.Context(), ap, asJSON, func(ctx context.Context) (*contracts.Run, error) {
					waited := false
					for {
						run, err := g.resume(ctx, ap, a[0])
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
func (g *globals) resume(ctx context.Context, ap *app.App, id string) (*contracts.Run, error) {
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
	case run.Status == contracts.RunPending:
		// Its process died while the planner worked: there is nothing to
		// continue, and returning it would print "resume" again.
		return nil, contracts.Errorf(contracts.CodePlanFailed,
			"run %s stopped while its goal was being planned: nothing ran and there is no plan to continue; plan the goal again (%s) and delete this one (%s)",
			run.ID, g.again("run", run.Goal), g.again("runs", "delete", run.ID)).With("run", run.ID)
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
		return contracts.Errorf(ce.Code, "%s; use --wait to wait for it", ce.Message).WithDetails(ce.Details)
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
	var asJSON bool
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
				if asJSON {
					return writeJSON(g.io.Out, map[string]any{"pruned": n, "older_than": olderThan.String()})
				}
				_, err = fmt.Fprintf(g.io.Out, "pruned %d finished run(s) older than %s\n", n, olderThan)
				return err
			})
		},
	}
	cmd.Flags().DurationVar(&olderThan, "older-than", 0, "age cut-off, e.g. 72h (default retention.runs)")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"pruned": N, "older_than": D}`)
	return cmd
}

func newRunsDeleteCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "delete RUN_ID...",
		Short: "Delete runs, whatever their status, with their logs",
		Long: `Delete the runs named, finished or not, with their append-only logs and snapshots:
all of them or none. An unknown id is error 3001; a run a process is driving (its
lease is live: 'ordo run', 'ordo runs resume' or a server is at it) is error 3004,
and nothing is deleted. What pattern memory learned from a run stays ('ordo memory
forget' deletes that).`,
		Example: `  ordo runs delete run_0123abcd
  ordo runs delete $(ordo runs list --status interrupted --json | jq -r '.[].id')`,
		Args:              args(1, -1),
		ValidArgsFunction: g.completeRunIDs,
		RunE: func(cmd *cobra.Command, ids []string) error {
			return g.withStore(cmd.Context(), func(_ *config.Config, st memory.Checkpointer) error {
				if err := st.Delete(cmd.Context(), ids); err != nil {
					return err
				}
				ids = slices.Compact(slices.Sorted(slices.Values(ids)))
				if asJSON {
					return writeJSON(g.io.Out, map[string]any{"deleted": ids})
				}
				_, err := fmt.Fprintf(g.io.Out, "deleted %d run(s): %s\n", len(ids), strings.Join(ids, ", "))
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"deleted": [RUN_ID...]}`)
	return cmd
}

func newRunsSaveTemplateCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "save-template RUN_ID NAME",
		Short: "Save a completed run's plan as a template of its user, to run again with new inputs",
		Long: `Save the plan a completed run finished with under NAME, in the pattern memory of the
run's user (replacing a template of the same name). 'ordo run --template NAME' runs it
again without a model; 'ordo memory list --namespace workflow' lists templates and
'ordo memory forget --template NAME' deletes one. Needs memory.enabled.`,
		Example: `  ordo runs save-template run_0123abcd q1-report
  ordo run --template q1-report --input read_sales.file=examples/data/sales.csv --yes`,
		Args:              args(2, 2),
		ValidArgsFunction: g.completeRunID,
		RunE: func(cmd *cobra.Command, a []string) error {
			return g.withApp(cmd, func(ap *app.App) error {
				if err := ap.Engine.SaveTemplate(cmd.Context(), a[0], a[1]); err != nil {
					return err
				}
				run, err := ap.Engine.Get(cmd.Context(), a[0])
				if err != nil {
					return err
				}
				actions := len(run.Plans[len(run.Plans)-1].Plan.Actions)
				if asJSON {
					return writeJSON(g.io.Out, map[string]any{"run_id": run.ID, "template": a[1], "user_id": run.UserID, "actions": actions})
				}
				_, err = fmt.Fprintf(g.io.Out, "saved the plan of %s as template %q of user %q (%d actions)\n", run.ID, a[1], run.UserID, actions)
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"run_id", "template", "user_id", "actions"}`)
	return cmd
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
