package agent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

// Budgets (Config.Budgets) limit what runs spend, per run and per user
// per UTC day. They are checked before every model call the engine makes
// and before every step. A spent budget fails the run closed with
// CodeBudgetExceeded or, with on_exceed ask, stops it at a budget_exceeded
// interrupt where a person raises that budget for the run or rejects. A
// day's use is summed from the store, the record every server sharing it
// writes, so a daily budget holds however many servers run a user's runs.

// budgetSteps is the index of "steps" in budgetNames.
const budgetSteps = 3

// DefaultRunModelCalls is budgets.run.model_calls where the configuration
// leaves it 0: the filler and the critic are asked per action and per
// attempt, so without it a plan of contracts.MaxPlanActions actions with
// retries and re-plans could make thousands of model calls. Four per
// action of the largest plan leave a planner, a filler and a critic for
// every action, a composer, and retries and re-plans of part of it.
const DefaultRunModelCalls = 4 * contracts.MaxPlanActions

// budgetScopes and budgetNames name a budget: scope.name, run.tokens.
var (
	budgetScopes = [...]string{"run", "user_day"}
	budgetNames  = [...]string{"model_calls", "tokens", "cost_usd", "steps", "wall_time"}
	budgetUnits  = [...]string{"", "", " USD", "", " s"}
)

// amounts are a contracts.Budget's amounts in budgetNames order.
type amounts [len(budgetNames)]float64

func amountsOf(b contracts.Budget) amounts {
	return amounts{float64(b.ModelCalls), float64(b.Tokens), b.CostUSD, float64(b.Steps), b.WallTime.Seconds()}
}

// spentBy is what run has spent up to until: its model calls, their
// tokens and cost, the steps it started itself (a fork's copied steps are
// older than the run: the forked run spent them), and its wall time — from
// the first of those to until, less the time it waited for people since.
func spentBy(run *contracts.Run, until time.Time) contracts.Budget {
	b := contracts.Budget{Tokens: run.Usage.Total.InputTokens + run.Usage.Total.OutputTokens, CostUSD: run.Usage.Total.CostUSD}
	for _, n := range run.LLMCalls {
		b.ModelCalls += n
	}
	var start time.Time
	for _, s := range run.Steps {
		if s.StartedAt.Before(run.CreatedAt) {
			continue
		}
		if s.Status != contracts.StepSkipped {
			b.Steps++
		}
		if start.IsZero() {
			start = s.StartedAt
		}
	}
	if !start.IsZero() && until.After(start) {
		b.WallTime = until.Sub(start)
		for _, d := range run.Decisions {
			if !d.Interrupt.CreatedAt.Before(start) {
				b.WallTime -= d.At.Sub(d.Interrupt.CreatedAt)
			}
		}
	}
	return b
}

// checkBudgets returns CodeBudgetExceeded, naming the budget in its
// details (a contracts.BudgetStop under "budget"), when one of the run's
// budgets is spent before `before` (a model call's role, or "step", with
// inFlight steps counted as taken). Store failures reading the day's runs
// are CodeStore.
func (e *Engine) checkBudgets(ctx context.Context, run *contracts.Run, before string, inFlight int) error {
	b := e.cfg.Budgets
	if b.Run.ModelCalls == 0 {
		b.Run.ModelCalls = DefaultRunModelCalls
	}
	limits := [len(budgetScopes)]amounts{amountsOf(b.Run), amountsOf(b.UserDay)}
	raised(run, &limits)
	used := spentBy(run, e.now())
	used.Steps += inFlight
	mine := amountsOf(used)
	spent := [len(budgetScopes)]amounts{mine}
	if limits[1] != (amounts{}) {
		day, err := e.spentToday(ctx, run)
		if err != nil {
			return err
		}
		for j := range day {
			spent[1][j] = day[j] + mine[j]
		}
	}
	for i, scope := range budgetScopes {
		for j, name := range budgetNames {
			if limit := limits[i][j]; limit > 0 && spent[i][j] >= limit {
				return spentError(contracts.BudgetStop{Budget: scope + "." + name, Limit: limit, Used: spent[i][j], Before: before})
			}
		}
	}
	return nil
}

// spentError is CodeBudgetExceeded for stop, which its details carry.
func spentError(stop contracts.BudgetStop) *contracts.Error {
	_, name, _ := strings.Cut(stop.Budget, ".")
	unit := ""
	if j := slices.Index(budgetNames[:], name); j >= 0 {
		unit = budgetUnits[j]
	}
	return contracts.Errorf(contracts.CodeBudgetExceeded, "the %s budget is spent before the %s: %s%s used of %s",
		stop.Budget, stop.Before, fmtAmount(stop.Used), unit, fmtAmount(stop.Limit)).With("budget", stop)
}

func fmtAmount(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// raised applies the limits people raised at the run's budget_exceeded
// interrupts: each holds for this run only.
func raised(run *contracts.Run, limits *[len(budgetScopes)]amounts) {
	for _, d := range run.Decisions {
		if d.Interrupt.Kind != contracts.InterruptBudgetExceeded || d.Decision.Kind != contracts.DecisionApprove {
			continue
		}
		n, err := raisedLimit(d.Interrupt.Budget, d.Decision.Answers)
		if err != nil {
			continue // refused when decided: it never raised anything
		}
		scope, name, _ := strings.Cut(d.Interrupt.Budget.Budget, ".")
		if i, j := slices.Index(budgetScopes[:], scope), slices.Index(budgetNames[:], name); i >= 0 && j >= 0 {
			limits[i][j] = n
		}
	}
}

// raisedLimit reads the new limit of a budget_exceeded approval,
// answers["limit"]: a number in the budget's unit (or, for wall_time, a
// duration such as "30m") above what was used.
func raisedLimit(stop *contracts.BudgetStop, answers map[string]any) (float64, error) {
	if stop == nil {
		return 0, contracts.Errorf(contracts.CodeInvalidDecision, "the interrupt names no budget").With("field", "decision")
	}
	n := math.NaN()
	switch v := answers["limit"].(type) {
	case float64:
		n = v
	case int:
		n = float64(v)
	case string:
		if d, err := time.ParseDuration(v); err == nil && strings.HasSuffix(stop.Budget, ".wall_time") {
			n = d.Seconds()
		} else if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			n = f
		}
	}
	if !(n > stop.Used) || math.IsInf(n, 0) {
		return 0, contracts.Errorf(contracts.CodeInvalidDecision, "approving needs answers.limit: a new %s limit above the %s used (or reject)",
			stop.Budget, fmtAmount(stop.Used)).With("field", "answers.limit").With("budget", stop.Budget)
	}
	return n, nil
}

// spentToday sums what the run's user's other runs updated today (UTC)
// spent, up to their last checkpoint, read from the store.
func (e *Engine) spentToday(ctx context.Context, run *contracts.Run) (amounts, error) {
	var sum amounts
	day := e.now().Truncate(24 * time.Hour)
	rows, err := e.deps.Store.List(ctx, memory.Filter{UserID: run.UserID, UpdatedAfter: day})
	if err != nil {
		return sum, contracts.Errorf(contracts.CodeStore, "read today's runs of user %q for their budget: %w", run.UserID, err)
	}
	started := e.started.of(day, run.UserID) // steps the store may not show yet
	delete(started, run.ID)
	for _, r := range rows {
		if r.ID == run.ID || r.UserID != run.UserID {
			continue
		}
		a, ok := e.today.get(day, r.ID)
		if !ok {
			other, err := e.deps.Store.Load(ctx, r.ID)
			if contracts.CodeOf(err) == contracts.CodeRunNotFound {
				continue // pruned since
			}
			if err != nil {
				return sum, contracts.Errorf(contracts.CodeStore, "read run %s for its user's budget: %w", r.ID, err)
			}
			a = amountsOf(spentBy(other, other.UpdatedAt))
			if other.Status.Final() {
				e.today.put(day, r.ID, a)
			}
		}
		a[budgetSteps] = max(a[budgetSteps], started[r.ID])
		delete(started, r.ID)
		for j := range sum {
			sum[j] += a[j]
		}
	}
	for _, n := range started { // runs not written yet
		sum[budgetSteps] += n
	}
	return sum, nil
}

// dayCache remembers, for one day, what finished runs spent: they never
// change again, so summing a day need not load them again. It is only a
// cache of the store; the store stays the record.
type dayCache struct {
	mu   sync.Mutex
	day  time.Time
	runs map[string]amounts
}

func (c *dayCache) get(day time.Time, id string) (amounts, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.runs[id]
	return a, ok && c.day.Equal(day)
}

func (c *dayCache) put(day time.Time, id string, a amounts) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.day.Equal(day) {
		c.day, c.runs = day, map[string]amounts{}
	}
	c.runs[id] = a
}

// stepsStarted remembers, for one day, how many steps each run of each
// user was let start under a day's step budget, and locks each user's
// checks.
type stepsStarted struct {
	mu    sync.Mutex
	day   time.Time
	runs  map[string]map[string]float64 // user -> run id -> steps
	users sync.Map                      // user -> *sync.Mutex
}

func (s *stepsStarted) lock(user string) (unlock func()) {
	l, _ := s.users.LoadOrStore(user, &sync.Mutex{})
	m := l.(*sync.Mutex)
	m.Lock()
	return m.Unlock
}

// of returns the steps user's runs were let start on day, by run id.
func (s *stepsStarted) of(day time.Time, user string) map[string]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.day.Equal(day) {
		return nil
	}
	return maps.Clone(s.runs[user])
}

// put records that user's run id was let start its steps-th step on day.
func (s *stepsStarted) put(day time.Time, user, id string, steps float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.day.Equal(day) {
		s.day, s.runs = day, map[string]map[string]float64{}
	}
	if s.runs[user] == nil {
		s.runs[user] = map[string]float64{}
	}
	s.runs[user][id] = steps
}

// budgetError is the spent budget in err's chain, if any (a planner
// failure wraps the planner call's error).
func budgetError(err error) *contracts.Error {
	for ; err != nil; err = errors.Unwrap(err) {
		if ce, ok := err.(*contracts.Error); ok && ce.Code == contracts.CodeBudgetExceeded {
			return ce
		}
	}
	return nil
}

// failOrAsk ends work on the run after err. A spent budget fails the run
// with that budget's error or, with on_exceed ask, stops it at a
// budget_exceeded interrupt about action (a direct tool call, one step
// with nothing to continue, always fails); cause is the failure the
// re-planner was stopped before handling (approving re-plans it).
// Anything else fails the run closed.
func (e *Engine) failOrAsk(ctx context.Context, run *contracts.Run, err error, action string, cause *contracts.Error) error {
	be := budgetError(err)
	if be == nil {
		return e.fail(ctx, run, err)
	}
	stop, ok := be.Details["budget"].(contracts.BudgetStop)
	if e.cfg.Budgets.OnExceed != contracts.OnExceedAsk || run.Options.Direct || !ok {
		return e.fail(ctx, run, be)
	}
	stop.Cause = cause
	return e.interrupt(ctx, run, &contracts.Interrupt{
		Kind:     contracts.InterruptBudgetExceeded,
		Message:  fmt.Sprintf(`%s: approve with answers {"limit": N} to raise it for this run, or reject`, be.Message),
		ActionID: action, Budget: &stop,
	})
}

// MaxRunBytes bounds what one run holds of its steps' payloads and results
// and its state: the whole run is in memory while it executes and in every
// record of it. Each result is bounded (contracts.MaxMessageBytes), but a
// plan may bind one into the next action after action, and a 25 KB plan of
// 200 text.template steps each passing on 1 MiB made a 400 MB run, a 1.3 GB
// store and a 4.9 GB process. A run that holds this much stops before its
// next step with CodeBudgetExceeded (details limit and used, no budget: no
// person can raise it).
const MaxRunBytes = 64 << 20

// recordedBytes is what run holds of step payloads and results and state.
func recordedBytes(run *contracts.Run) int {
	n := 0
	for _, s := range run.Steps {
		n += len(s.Payload) + len(s.Result)
	}
	for _, v := range run.State {
		n += len(v)
	}
	return n
}

// stepBudget checks the budgets before action a, with inFlight steps
// running: a spent budget is the action's failure; other errors are the
// store's. Under a day's step budget a user's steps are checked one at a
// time, and the steps each run was let start are remembered for the day:
// the store shows a step only once it ends (a call's start is not
// written), so without them a user's runs started together would all
// pass the last step left. (Engines sharing a store do not see each
// other's starts: there a day's budget can still be passed by as many
// steps as servers.)
func (e *Engine) stepBudget(ctx context.Context, run *contracts.Run, a contracts.Action, inFlight int) (*failure, error) {
	if e.cfg.Budgets.UserDay.Steps > 0 {
		unlock := e.started.lock(run.UserID)
		defer unlock()
	}
	err := e.checkBudgets(ctx, run, "step", inFlight)
	if n := recordedBytes(run); err == nil && n >= MaxRunBytes {
		err = contracts.Errorf(contracts.CodeBudgetExceeded, "the run holds %d bytes of payloads, results and state, the most a run may hold is %d: it stops before the next step",
			n, MaxRunBytes).With("limit", MaxRunBytes).With("used", n).With("before", "step")
	}
	if err == nil && e.cfg.Budgets.UserDay.Steps > 0 {
		now := e.now()
		e.started.put(now.Truncate(24*time.Hour), run.UserID, run.ID, float64(spentBy(run, now).Steps+inFlight+1))
	}
	if be := budgetError(err); be != nil {
		return &failure{a.ID, be}, nil
	}
	return nil, err
}
