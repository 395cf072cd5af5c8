package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// vaultTool is a destructive tool (so each call waits for step approval)
// whose token field is secret; it records the tokens it was called with.
func vaultTool(got *[]string, mu *sync.Mutex) sdk.Tool {
	vault := tool("vault.put", contracts.RiskDestructive,
		`{"type":"object","required":["key","token"],"properties":{"key":{"type":"string"},"token":{"type":"string"}}}`,
		`{"type":"object"}`, nil, func(_ context.Context, c sdk.Call) (any, error) {
			mu.Lock()
			defer mu.Unlock()
			*got = append(*got, c.Payload["token"].(string))
			return map[string]any{}, nil
		})
	vault.Contract.SecretFields = []string{"token"}
	return vault
}

const putPlan = `{"version":"1.0","goal":"store","timezone":"UTC","actions":[
 {"id":"a1","tool":"vault.put","intent":"write","requires":[],"produces":[],"inputs":{}}]}`

// noSecret fails if the run, as returned or as its store's log holds it,
// contains secret.
func noSecret(t *testing.T, store interface {
	Log(context.Context, string, int64, int) ([]contracts.RunDelta, error)
}, run *contracts.Run, secret string) {
	t.Helper()
	log, err := store.Log(context.Background(), run.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for what, v := range map[string]any{"log": log, "run": run} {
		if raw, _ := json.Marshal(v); strings.Contains(string(raw), secret) {
			t.Fatalf("the %s holds the secret: %s", what, raw)
		}
	}
}

// An answer may name a payload path as "$.token", "token", "$token" or
// ".token" (applyAnswers takes them all): every spelling of a secret field
// is recorded redacted and kept out of pattern memory, not only "$.token".
func TestSecretAnswerSpelledOtherwiseStaysOutOfTheLog(t *testing.T) {
	ctx := context.Background()
	var got []string
	var mu sync.Mutex
	tt := newTools(t, vaultTool(&got, &mu))
	store := newStore()
	e := New(Config{}, Deps{Tools: tt, Store: store})
	plan := `{"version":"1.0","goal":"store","timezone":"UTC","actions":[
	 {"id":"a1","tool":"vault.put","intent":"write","requires":[],"produces":[],"inputs":{"token":"plan-token"}}]}`
	for _, key := range []string{"$token", ".token", "token"} {
		secret := "s3cret" + key
		r, err := e.Run(ctx, Request{Plan: mustPlan(t, plan), UserID: "ann"})
		wantStatus(t, r, err, contracts.RunInterrupted)
		r, err = e.Resume(ctx, r.ID, contracts.Decision{Kind: contracts.DecisionAnswer, Answers: map[string]any{"$.key": "k", key: secret}, By: "ann"})
		wantStatus(t, r, err, contracts.RunInterrupted)
		noSecret(t, store, r, secret)
		if kept := forMemory(r, tt); len(kept.Decisions[0].Decision.Answers) != 1 {
			t.Fatalf("%q: memory would be given %v", key, kept.Decisions[0].Decision.Answers)
		}
	}
}

func TestSecretsStayOutOfTheLog(t *testing.T) {
	ctx := context.Background()
	var got []string
	var mu sync.Mutex
	mint := tool("vault.mint", contracts.RiskRead, `{"type":"object"}`,
		`{"type":"object","required":["token"],"properties":{"token":{"type":"string"}}}`, map[string]string{"token": "$.token"},
		returns(map[string]any{"token": "minted-s3cret"}))
	tt := newTools(t, vaultTool(&got, &mu), mint)
	store := newStore()
	e := New(Config{}, Deps{Tools: tt, Store: store})

	// An answer to a secret field: recorded redacted, the call gets it.
	r, err := e.Run(ctx, Request{Plan: mustPlan(t, putPlan), UserID: "ann"})
	wantStatus(t, r, err, contracts.RunInterrupted)
	if in := r.Interrupt; len(in.Fields) != 2 || len(in.Secret) != 1 || in.Secret[0] != "$.token" {
		t.Fatalf("the interrupt names %v secret among %v", in.Secret, in.Fields)
	}
	r, err = e.Resume(ctx, r.ID, contracts.Decision{Kind: contracts.DecisionAnswer, Answers: map[string]any{"$.key": "k1", "$.token": "s3cret-1"}, By: "ann"})
	wantStatus(t, r, err, contracts.RunInterrupted) // step approval, payload shown redacted
	if r.Interrupt.Kind != contracts.InterruptStepApproval || strings.Contains(string(r.Interrupt.Payload), "s3cret") {
		t.Fatalf("approval = %+v", r.Interrupt)
	}
	r, err = e.Resume(ctx, r.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "ann"})
	wantStatus(t, r, err, contracts.RunCompleted)
	noSecret(t, store, r, "s3cret-1")
	if answer := r.Decisions[0].Decision.Answers["$.token"]; answer != contracts.Redacted {
		t.Fatalf("recorded answer = %v", answer)
	}

	// Approved by another engine (another process): the typed value is
	// gone, so the person is asked for it again, never the marker sent.
	r, err = e.Run(ctx, Request{Plan: mustPlan(t, putPlan), UserID: "ann"})
	wantStatus(t, r, err, contracts.RunInterrupted)
	r, err = e.Resume(ctx, r.ID, contracts.Decision{Kind: contracts.DecisionAnswer, Answers: map[string]any{"$.key": "k2", "$.token": "s3cret-2"}, By: "ann"})
	wantStatus(t, r, err, contracts.RunInterrupted)
	second := r.ID
	other := New(Config{}, Deps{Tools: tt, Store: store})
	r, err = other.Resume(ctx, r.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "ann"})
	wantStatus(t, r, err, contracts.RunInterrupted)
	if in := r.Interrupt; in.Kind != contracts.InterruptInputRequired || len(in.Fields) != 1 || in.Fields[0] != "$.token" {
		t.Fatalf("want the token asked again, got %+v", in)
	}
	// The call was approved already; the answer lets it run.
	r, err = other.Resume(ctx, r.ID, contracts.Decision{Kind: contracts.DecisionAnswer, Answers: map[string]any{"$.token": "s3cret-3"}, By: "ann"})
	wantStatus(t, r, err, contracts.RunCompleted)
	noSecret(t, store, r, "s3cret-2")
	noSecret(t, store, r, "s3cret-3")

	// A secret typed into an edited payload: recorded redacted, sent as typed.
	edit := `{"version":"1.0","goal":"store","timezone":"UTC","actions":[
	 {"id":"a1","tool":"vault.put","intent":"write","requires":[],"produces":[],"inputs":{"key":"k4","token":"plan-token"}}]}`
	r, err = e.Run(ctx, Request{Plan: mustPlan(t, edit), UserID: "ann"})
	wantStatus(t, r, err, contracts.RunInterrupted)
	r, err = e.Resume(ctx, r.ID, contracts.Decision{Kind: contracts.DecisionEdit, Payload: json.RawMessage(`{"key":"k4","token":"s3cret-4"}`), By: "ann"})
	wantStatus(t, r, err, contracts.RunCompleted)
	noSecret(t, store, r, "s3cret-4")

	// An edit that sends the shown marker back: the plan's own value is used.
	r, err = e.Run(ctx, Request{Plan: mustPlan(t, edit), UserID: "ann"})
	wantStatus(t, r, err, contracts.RunInterrupted)
	r, err = e.Resume(ctx, r.ID, contracts.Decision{Kind: contracts.DecisionEdit, Payload: json.RawMessage(`{"key":"k5","token":"[REDACTED]"}`), By: "ann"})
	wantStatus(t, r, err, contracts.RunCompleted)

	// A token the run bound itself (from an earlier step's result) is not
	// shown in the question for the missing key, and is the one sent.
	minted := `{"version":"1.0","goal":"mint and store","timezone":"UTC","actions":[
	 {"id":"m1","tool":"vault.mint","intent":"read","requires":[],"produces":["token"],"inputs":{}},
	 {"id":"a1","tool":"vault.put","intent":"write","requires":["token"],"produces":[],"inputs":{}}]}`
	r, err = e.Run(ctx, Request{Plan: mustPlan(t, minted), UserID: "ann"})
	wantStatus(t, r, err, contracts.RunInterrupted)
	if in := r.Interrupt; in.Kind != contracts.InterruptInputRequired || strings.Contains(string(in.Payload), "minted") ||
		strings.Contains(string(in.Payload), `"key"`) || !slices.Equal(in.Fields, []string{"$.key"}) || len(in.Secret) != 0 {
		t.Fatalf("question %+v payload %s", in, in.Payload)
	}
	r, err = e.Resume(ctx, r.ID, contracts.Decision{Kind: contracts.DecisionAnswer, Answers: map[string]any{"$.key": "k6"}, By: "ann"})
	wantStatus(t, r, err, contracts.RunInterrupted)
	r, err = e.Resume(ctx, r.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "ann"})
	wantStatus(t, r, err, contracts.RunCompleted)

	mu.Lock()
	defer mu.Unlock()
	if want := []string{"s3cret-1", "s3cret-3", "s3cret-4", "plan-token", "minted-s3cret"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("the tool got tokens %v, want %v", got, want)
	}
	// What an engine's own runs held is gone when they end; the run the
	// other engine finished leaves this one its value for an hour.
	if len(other.typed.m) != 0 || len(e.typed.m) != 1 {
		t.Fatalf("typed secrets outlive their runs: %v %v", e.typed.m, other.typed.m)
	}
	if e.typed.get(e.now(), second, "v1/a1") == nil {
		t.Fatal("the value typed for the second run is not held")
	}
	if v := e.typed.get(e.now().Add(typedSecretsTTL+time.Second), second, "v1/a1"); v != nil {
		t.Fatalf("a typed value outlived its hour: %v", v)
	}
}

// loginTool's password is secret (its schema marks it format "password");
// it refuses user "bad" with an error that repeats the password, and
// answers user "echo" with its request, as careless tools do.
func loginTool() sdk.Tool {
	return tool("vault.login", contracts.RiskRead,
		`{"type":"object","required":["user","password"],"properties":{"user":{"type":"string"},"password":{"type":"string","format":"password"}}}`,
		`{"type":"object"}`, nil, func(_ context.Context, c sdk.Call) (any, error) {
			if c.Payload["user"] == "echo" {
				return map[string]any{"request": c.Payload, "said": fmt.Sprint(c.Payload)}, nil
			}
			return nil, sdk.ToolError(false, "login refused for %v with password %v", c.Payload["user"], c.Payload["password"])
		})
}

// A secret a person typed that the tool repeats — in its error, in its
// result — reaches neither the run's log, nor the engine's debug log, nor
// the re-planner's prompt: the real host hides it in the tool's answer
// before anything records it (host.Conceal).
func TestRepeatedSecretStaysOutOfLogsAndPrompts(t *testing.T) {
	ctx := context.Background()
	h, err := host.New()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	p, err := host.InProcess(loginTool(), tool("text.note", contracts.RiskRead, `{"type":"object"}`, `{"type":"object"}`, nil, returns(map[string]any{})))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.AddProvider(ctx, "test", "1", p); err != nil {
		t.Fatal(err)
	}
	model, srv := scripted(t, replanner(`{"version":"1.0","goal":"note","timezone":"UTC","actions":[
	  {"id":"n1","tool":"text.note","intent":"read","requires":[],"produces":[],"inputs":{}}]}`), composer("done"), composer("done"))
	var logs bytes.Buffer
	store := newStore()
	e := New(Config{}, Deps{Tools: h, Store: store, LLM: model,
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	for _, user := range []string{"bad", "echo"} {
		secret := "typed-s3cret-" + user
		r, err := e.Run(ctx, Request{Plan: mustPlan(t, `{"version":"1.0","goal":"log in","timezone":"UTC","actions":[
		  {"id":"a1","tool":"vault.login","intent":"read","requires":[],"produces":[],"inputs":{"user":"`+user+`"}}]}`), UserID: "ann"})
		wantStatus(t, r, err, contracts.RunInterrupted)
		r, err = e.Resume(ctx, r.ID, contracts.Decision{Kind: contracts.DecisionAnswer, Answers: map[string]any{"$.password": secret}, By: "ann"})
		wantStatus(t, r, err, contracts.RunCompleted)
		noSecret(t, store, r, secret)
		if strings.Contains(logs.String(), secret) {
			t.Fatalf("%s: the engine's log holds the secret:\n%s", user, logs.String())
		}
		if raw, _ := json.Marshal(r.Steps[0]); !strings.Contains(string(raw), contracts.Redacted) {
			t.Fatalf("%s: the step shows no marker where the tool repeated the secret: %s", user, raw)
		}
	}
	if srv.Count("replanner") != 1 {
		t.Fatalf("%d re-planner calls, want 1 (after the refused login)", srv.Count("replanner"))
	}
	for _, req := range srv.Requests() {
		if raw, _ := json.Marshal(req.Messages); strings.Contains(string(raw), "typed-s3cret") {
			t.Fatalf("the %s's prompt holds the secret: %s", req.Role, raw)
		}
	}
}

// A secret field the filler writes under another spelling ("TOKEN" for
// token, which the tool's decoder takes for it) is dropped like the field
// itself: the model's value reaches neither the tool nor the run.
func TestFillerSecretSpelledOtherwiseDropped(t *testing.T) {
	var got []string
	fetch := tool("api.fetch", contracts.RiskRead,
		`{"type":"object","required":["q"],"properties":{"q":{"type":"string"},"token":{"type":"string"}}}`,
		`{"type":"object"}`, nil, func(_ context.Context, c sdk.Call) (any, error) {
			var in struct {
				Token string `json:"token"`
			}
			if err := c.Decode(&in); err != nil {
				return nil, err
			}
			got = append(got, in.Token)
			return map[string]any{}, nil
		})
	fetch.Contract.SecretFields = []string{"token"}
	m, _ := scripted(t, planner(`{"version":"1.0","goal":"fetch","timezone":"UTC","actions":[
	  {"id":"a1","tool":"api.fetch","intent":"read","requires":[],"produces":[],"inputs":{}}]}`),
		llmtest.Reply{Role: "filler", Content: `{"q":"x","TOKEN":"model-made-token"}`}, composer("done"))
	store := newStore()
	e := New(Config{}, Deps{Tools: newTools(t, fetch), LLM: m, Store: store})
	run, err := e.Run(context.Background(), Request{Goal: "fetch x"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if len(got) != 1 || got[0] != "" {
		t.Fatalf("api.fetch got tokens %q, want none", got)
	}
	noSecret(t, store, run, "model-made")
}

// A secret written literally into a plan is for that run: pattern memory
// keeps the plan as an example without it, a template saved from the run
// holds no value there, and a run of the template asks a person for it
// (input_required, unseen).
func TestRememberedPlansHoldNoSecrets(t *testing.T) {
	ctx := t.Context()
	var got []any
	login := loginTool()
	echo := login.Handler
	login.Handler = func(ctx context.Context, c sdk.Call) (any, error) {
		got = append(got, c.Payload["password"])
		return echo(ctx, c)
	}
	deps, m := withMemory(t, Deps{Tools: newTools(t, login), Store: newStore()})
	e := New(Config{Memory: MemoryConfig{Collect: true}}, deps)
	run, err := e.Run(ctx, Request{Plan: mustPlan(t, `{"version":"1.0","goal":"log in to the vault","timezone":"UTC","actions":[
	  {"id":"a1","tool":"vault.login","intent":"read","requires":[],"produces":[],"inputs":{"user":"echo","password":"plan-s3cret"}}]}`), UserID: "ann"})
	wantStatus(t, run, err, contracts.RunCompleted)
	flush(t, deps)
	examples, err := m.Examples(ctx, "ann", "log in to the vault", 3)
	if err != nil || len(examples) != 1 {
		t.Fatalf("examples %+v: %v", examples, err)
	}
	if err := e.SaveTemplate(ctx, run.ID, "login"); err != nil {
		t.Fatal(err)
	}
	tpl, err := m.Template(ctx, "ann", "login")
	if err != nil {
		t.Fatal(err)
	}
	for what, p := range map[string]contracts.Plan{"example": examples[0].Plan, "template": tpl.Plan} {
		if raw, _ := json.Marshal(p); strings.Contains(string(raw), "s3cret") || !strings.Contains(string(raw), `"user":"echo"`) {
			t.Fatalf("the %s: %s", what, raw)
		}
	}
	run, err = e.RunTemplate(ctx, TemplateRequest{Name: "login", UserID: "ann"})
	wantStatus(t, run, err, contracts.RunInterrupted)
	if in := run.Interrupt; in.Kind != contracts.InterruptInputRequired || !slices.Equal(in.Secret, []string{"$.password"}) {
		t.Fatalf("a run of the template: %+v", in)
	}
	run, err = e.Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionAnswer, Answers: map[string]any{"$.password": "typed-s3cret"}, By: "ann"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if !slices.Equal(got, []any{"plan-s3cret", "typed-s3cret"}) {
		t.Fatalf("vault.login got %v", got)
	}
}
