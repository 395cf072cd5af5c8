package agent

import (
	"context"
	"encoding/json"
	"io/fs"
	"log/slog"
	"sync"
	"time"

	"github.com/ordo-run/ordo/agent/llm"
	"github.com/ordo-run/ordo/agent/policy"
	"github.com/ordo-run/ordo/agent/prompts"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/ids"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/recommender"

	// Users' timezones resolve on machines without a zoneinfo database.
	_ "time/tzdata"
)

// Tools is the engine's view of the tool catalog: the host implements it.
// Call validates the payload and result against the contract — the one
// place they are validated; the engine does not repeat it — and retries
// retryable tool errors; the key is the same for a re-issued call.
type Tools interface {
	Lookup(name string) (*contracts.Tool, bool)
	List() []*contracts.Tool
	Call(ctx context.Context, tool string, payload json.RawMessage, idempotencyKey string, opts ...host.CallOption) (json.RawMessage, error)
}

// Availability is implemented by Tools that know when a tool's source is
// down (*host.Host: a restarting plugin, an unreachable upstream MCP
// server). The engine then refuses plans that use such a tool with
// CodeToolUnavailable and leaves them out of the planner's candidates.
type Availability interface {
	Available(tool string) bool
	Unavailable() []string
}

// Recommender ranks catalog tools for a query, best first, and says how
// much of a query its index covers at all; recommender.Recommender is one.
type Recommender interface {
	Search(ctx context.Context, query string, o recommender.SearchOptions) ([]recommender.Hit, error)
	Coverage(query string) float64
}

// Verifier modes.
const (
	VerifyCode = "code" // output schema, produces, success_criteria (default)
	VerifyLLM  = "llm"  // code checks, then an LLM critic scores the result
)

// VerifierConfig configures result verification. In llm mode a critic
// scores each result that passed the code checks; a score below Threshold
// retries the action with the critic's feedback (up to MaxIterations
// attempts in all), then re-plans. The critic always judges the latest
// attempt.
type VerifierConfig struct {
	Mode          string   `json:"mode"`
	Threshold     float64  `json:"threshold"`       // default 0.7
	MaxIterations int      `json:"max_iterations"`  // default 3
	Tools         []string `json:"tools,omitempty"` // tools to critique; empty = all
}

// PolicyConfig is the tenant policy (see agent/policy).
type PolicyConfig = policy.Config

// Config tunes the engine. The zero value works: no HITL interrupts except
// policy confirmations, parallelism 4, 3 re-plans, 8 candidates, code
// verification, UTC, embedded prompts. DefaultConfig gives `ordo`'s HITL
// defaults instead.
type Config struct {
	Parallelism  int `json:"parallelism"`   // actions in flight at once (default 4)
	ReplanBudget int `json:"replan_budget"` // re-plans per run (default 3; <0 means none)
	CandidatesK  int `json:"candidates_k"`  // tools shown to the planner (default 8)
	AllToolsMax  int `json:"all_tools_max"` // catalogs up to this size go to the planner whole (default AllToolsBound; <0: always rank)
	HITL         contracts.HITLSwitches
	Policy       PolicyConfig
	Verifier     VerifierConfig
	Timezone     string `json:"timezone"` // default UTC
	Locale       string `json:"locale"`   // default en-US
	// Prompts overrides the embedded prompts file by file (NAME.md).
	Prompts fs.FS `json:"-"`
	// PromptStateBytes bounds the run state one prompt shows a model, its
	// larger values cut and marked (default DefaultPromptStateBytes; <0:
	// no bound; see promptState).
	PromptStateBytes int `json:"prompt_state_bytes"`
	// Owner names this engine in run leases (default: host/pid/random);
	// LeaseTTL is how long a lease outlives its last renewal (default
	// DefaultLeaseTTL). Used only when the store is a memory.Leaser.
	Owner    string        `json:"owner"`
	LeaseTTL time.Duration `json:"lease_ttl"`
	// Memory switches the uses of pattern memory (Deps.Memory).
	Memory MemoryConfig `json:"memory"`
	// Budgets limit what a run, and a user's runs in a day, may spend
	// (see budget.go); Prices, by model, give model calls their cost.
	Budgets contracts.Budgets    `json:"budgets"`
	Prices  map[string]llm.Price `json:"prices"`
	// OnFailure is what an action that still fails after its retries does:
	// replan, ask (a step_failed interrupt) or fail. Empty: replan with a
	// model, ask without one, so a caller's plan is never a dead end.
	OnFailure string `json:"on_failure"`
}

// DefaultConfig is Config with people in the loop as `ordo` starts them
// (its hitl.* defaults): the planner may ask, and a plan waits for
// approval before it runs; steps do not wait one by one.
func DefaultConfig() Config {
	return Config{HITL: contracts.HITLSwitches{Enabled: true, Clarification: true, PlanApproval: true}}
}

// Deps are the engine's collaborators. Tools and Store are required (a nil
// Store means an in-memory one); LLM nil means callers must supply plans
// and answers are composed from templates.
type Deps struct {
	Tools       Tools
	LLM         llm.LLM
	Store       memory.Checkpointer
	Recommender Recommender
	Logger      *slog.Logger
	Events      func(Event)
	// Memory is the user's pattern memory and Collector feeds it finished
	// runs in the background; Config.Memory says what they are used for.
	// Leave both nil, not a typed nil pointer, when memory is off.
	Memory    PatternMemory
	Collector RunCollector
	// Requests carries pause and cancel requests between processes (see
	// steer.go); nil means Store's, when Store is a memory.Requester.
	Requests memory.Requester
	// Scopes gives the scopes a user holds now (the app's policy.users).
	// A stored plan that goes on executing is checked against them, so a
	// grant revoked since it was planned holds; nil: the run's own scopes.
	Scopes func(user string) []string
}

// Event kinds.
const (
	EventRunStarted    = "run_started"
	EventPlanReady     = "plan_ready"
	EventPolicy        = "policy_decided"
	EventInterrupted   = "interrupted"
	EventResumed       = "resumed"
	EventStepStarted   = "step_started"
	EventStepSucceeded = "step_succeeded"
	EventStepFailed    = "step_failed"
	EventStepSkipped   = "step_skipped"
	EventReplan        = "replan"
	EventCompleted     = "completed"
	EventFailed        = "failed"
	EventRejected      = "rejected"
	EventCancelled     = "cancelled"
	// A model call for the role in Message (planner, composer, …) started
	// and ended: a person waiting on one sees what for.
	EventLLMStarted = "llm_started"
	EventLLMEnded   = "llm_ended"
)

// Event reports progress as a run goes, to Deps.Events and to a per-call
// subscriber set with WithEvents.
type Event struct {
	RunID    string              `json:"run_id"`
	Seq      int64               `json:"seq"` // the checkpoint the event follows
	Kind     string              `json:"kind"`
	ActionID string              `json:"action_id,omitempty"`
	Tool     string              `json:"tool,omitempty"`
	Status   contracts.RunStatus `json:"status"`
	Message  string              `json:"message,omitempty"`
	// Actions is the size of the run's current plan (0 before it has one),
	// the total a progress display counts finished actions against.
	Actions int       `json:"actions,omitempty"`
	Time    time.Time `json:"time"`
}

type eventsKey struct{}

// WithEvents returns a context whose engine calls also report events to fn
// (for MCP progress notifications of one request).
func WithEvents(ctx context.Context, fn func(Event)) context.Context {
	return context.WithValue(ctx, eventsKey{}, fn)
}

type modelKey struct{}

// WithModel returns a context whose engine calls ask m instead of
// Deps.LLM (an MCP client's own model, through sampling, where Ordo has
// none): the same engine, with its leases, budgets and steering, drives
// runs for callers who bring their model.
func WithModel(ctx context.Context, m llm.LLM) context.Context {
	return context.WithValue(ctx, modelKey{}, m)
}

// model is the model this call asks: the caller's (WithModel), else the
// configured one; nil when there is none.
func (e *Engine) model(ctx context.Context) llm.LLM {
	if m, ok := ctx.Value(modelKey{}).(llm.LLM); ok && m != nil {
		return m
	}
	return e.deps.LLM
}

// Request starts a run: a goal to plan, or a plan the caller wrote.
type Request struct {
	Goal    string
	Plan    *contracts.Plan // when set, no planner call is made
	Context string          // extra facts for the planner, re-planner and composer (kept in the run)
	UserID  string
	// Session makes the run a turn of the user's conversation of that
	// name (see session.go).
	Session string
	Options contracts.RunOptions
	// Source names where a given Plan came from in its plan revision:
	// "caller" (the default), "template", "gateway", "fork".
	Source string
	// args are a direct call's arguments with their secrets, kept in
	// memory only while Call drives the run (see Call).
	args json.RawMessage
	// seed and reason: what a fork takes over, and why (see Fork).
	seed   *forkSeed
	reason string
	// execute: Run executes the run once it is ready (see afterPlan);
	// checked then receives the plan's graph, so that it is not checked
	// again before it runs.
	execute bool
	checked **contracts.Graph
}

// Engine runs plans. It holds no per-run memory: every method loads the
// run from the store, so any engine sharing the store can continue it.
type Engine struct {
	cfg     Config
	deps    Deps
	prompts prompts.Set
	log     *slog.Logger
	now     func() time.Time
	leaseMu sync.Mutex
	leases  map[string]*lease // runs this engine drives now
	args    sync.Map          // run id -> a direct call's arguments, while Call or Confirm drives it
	typed   typedSecrets      // secret values people typed, kept out of the run log (secrets.go)
	today   dayCache          // what users' finished runs used today
	started stepsStarted      // steps let through users' day budgets today, by run
	steer   steering          // the drives a pause or cancel made here reaches (steer.go)
}

// New builds an engine. Bad prompt overrides fall back to the embedded
// defaults with an error logged; use prompts.Load to check them first.
func New(cfg Config, deps Deps) *Engine {
	if cfg.Parallelism <= 0 {
		cfg.Parallelism = 4
	}
	if cfg.ReplanBudget == 0 {
		cfg.ReplanBudget = 3
	}
	if cfg.CandidatesK <= 0 {
		cfg.CandidatesK = 8
	}
	if cfg.Timezone == "" {
		cfg.Timezone = "UTC"
	}
	if cfg.Locale == "" {
		cfg.Locale = "en-US"
	}
	if cfg.Verifier.Threshold <= 0 {
		cfg.Verifier.Threshold = 0.7
	}
	if cfg.Verifier.MaxIterations <= 0 {
		cfg.Verifier.MaxIterations = 3
	}
	if cfg.Owner == "" {
		cfg.Owner = defaultOwner()
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if deps.Store == nil {
		deps.Store = memory.NewMemStore()
	}
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ps, err := prompts.Load(cfg.Prompts)
	if err != nil {
		log.Error("prompt overrides refused, using defaults", "err", err)
		ps = prompts.Defaults()
	}
	return &Engine{cfg: cfg, deps: deps, prompts: ps, log: log, now: func() time.Time { return time.Now().UTC() }, leases: map[string]*lease{}}
}

// Get returns the full record of a run.
func (e *Engine) Get(ctx context.Context, runID string) (*contracts.Run, error) {
	return e.deps.Store.Load(ctx, runID)
}

// Log returns up to limit entries of a run's log after the cursor `after`
// (a sequence number; 0 for all), in order: what a client that follows a
// run reads, and resumes from where it stopped (see memory.Checkpointer).
func (e *Engine) Log(ctx context.Context, runID string, after int64, limit int) ([]contracts.RunDelta, error) {
	return e.deps.Store.Log(ctx, runID, after, limit)
}

func newRunID() string {
	return "run_" + ids.Hex(12)
}

func (e *Engine) emit(ctx context.Context, run *contracts.Run, kind, actionID, tool, msg string) {
	if e.log.Enabled(ctx, slog.LevelDebug) {
		e.log.Debug("run event", "run_id", run.ID, "kind", kind, "action", actionID, "tool", tool, "msg", msg)
	}
	fn, _ := ctx.Value(eventsKey{}).(func(Event))
	if e.deps.Events == nil && fn == nil {
		return // nobody listens
	}
	ev := Event{RunID: run.ID, Seq: run.Seq, Kind: kind, ActionID: actionID, Tool: tool, Status: run.Status, Message: msg, Time: e.now()}
	if n := len(run.Plans); n > 0 {
		ev.Actions = len(run.Plans[n-1].Plan.Actions)
	}
	if e.deps.Events != nil {
		e.deps.Events(ev)
	}
	if fn != nil {
		fn(ev)
	}
}

// hitl is the run's effective switch set.
func (e *Engine) hitl(run *contracts.Run) contracts.HITLSwitches {
	if run.Options.HITL != nil {
		return *run.Options.HITL
	}
	return e.cfg.HITL
}

// complete makes one orchestration LLM call, counted under role in the
// run, if the run's budgets allow one more (else CodeBudgetExceeded).
func (e *Engine) complete(ctx context.Context, run *contracts.Run, role string, user any, schema []byte) (string, error) {
	if e.model(ctx) == nil {
		return "", contracts.Errorf(contracts.CodeNoLLM, "the %s needs a model and none is configured", role)
	}
	body, err := json.Marshal(user)
	if err != nil {
		return "", contracts.Errorf(contracts.CodeInternal, "%s input: %w", role, err)
	}
	if err := e.checkBudgets(ctx, run, role, 0); err != nil {
		return "", err
	}
	e.emit(ctx, run, EventLLMStarted, "", "", role)
	resp, err := e.model(ctx).Complete(ctx, llm.Request{
		Messages:   []llm.Message{{Role: llm.RoleSystem, Content: e.prompts[role]}, {Role: llm.RoleUser, Content: string(body)}},
		Schema:     schema,
		SchemaName: role,
	})
	e.emit(ctx, run, EventLLMEnded, "", "", role)
	e.count(run, role, resp.Usage)
	if err != nil {
		return "", err
	}
	return resp.Text, nil
}

// count records one model call under role: the call, and the tokens the
// provider reported (a failed call's too), bounded, at their configured price.
func (e *Engine) count(run *contracts.Run, role string, u llm.Usage) {
	u = u.Bounded()
	if run.LLMCalls == nil {
		run.LLMCalls = map[string]int{}
	}
	run.LLMCalls[role]++
	t := contracts.TokenUsage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, CachedTokens: u.CachedTokens}
	if u.Model != "" {
		t.Models, t.CostUSD = []string{u.Model}, e.cfg.Prices[u.Model].Cost(u)
	}
	run.Usage.Add(role, t)
}

// localNow is the current date and time in the run's timezone (UTC when
// it names none Go knows), with the weekday, as the planner, re-planner,
// filler and composer see it: "tomorrow at 3 pm" needs today.
func (e *Engine) localNow(run *contracts.Run) string {
	loc, err := time.LoadLocation(run.Options.Timezone)
	if err != nil {
		loc = time.UTC
	}
	now := e.now().In(loc)
	return now.Format(time.RFC3339) + " (" + now.Weekday().String() + ")"
}
