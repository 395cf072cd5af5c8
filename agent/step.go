package agent

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/ordo-run/ordo/agent/llm"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
)

// prepare readies one attempt of action a: it binds the payload and stops
// for missing values or an approval (a returned interrupt). The attempt's
// idempotency key is deterministic (run, plan version, action, attempt),
// so nothing needs writing before the call: a call cut off by a crash is
// re-issued under the same key.
func (e *Engine) prepare(ctx context.Context, run *contracts.Run, prog *progress, a contracts.Action, state map[string]any) (outcome, *contracts.Interrupt, error) {
	tool, ok := e.deps.Tools.Lookup(a.Tool)
	if !ok {
		return outcome{}, nil, contracts.Errorf(contracts.CodeUnknownTool, "tool %s left the catalog", a.Tool).With("action", a.ID).With("tool", a.Tool)
	}
	version := prog.version
	o := outcome{action: a, tool: tool}
	if rec, ok := prog.started[a.ID]; ok {
		// An older build recorded this call as started and stopped before
		// it ended: re-issue it under the same key; a recorded payload is
		// exact unless secrets were redacted out of it.
		o.started = rec
		o.started.StartedAt = e.now()
		if len(tool.Contract.SecretFields) == 0 && len(rec.Payload) > 0 {
			return o, nil, nil
		}
		payload, _, err := e.bind(ctx, run, version, a, tool, state, "")
		o.started.Payload = payload
		return o, nil, err
	}
	retry := prog.tries[a.ID] > 0 // the critic may have asked a person, or patched the payload
	if retry {
		if in := verifyQuestion(run, version, a); in != nil {
			return o, in, nil
		}
	}
	attempt := prog.tries[a.ID] + 1
	payload, missing, approved, err := e.approvedPayload(run, version, a, tool, state, attempt)
	if err != nil {
		return o, nil, err
	}
	if payload == nil {
		feedback := prog.feedback[a.ID]
		if retry {
			feedback = retryFeedback(run, version, a.ID, feedback)
		}
		if payload, missing, err = e.bind(ctx, run, version, a, tool, state, feedback); err != nil {
			return o, nil, err
		}
		if retry {
			payload = e.withOverrides(run, version, a, tool, payload)
		}
	}
	if run.Options.Direct {
		if payload, missing, err = e.directPayload(run, tool, payload, missing); err != nil {
			return o, nil, err
		}
	}
	if len(missing) > 0 {
		return o, &contracts.Interrupt{
			Kind: contracts.InterruptInputRequired, Message: "values needed for " + describeAction(a) + ": " + strings.Join(missing, ", "),
			PlanVersion: version, ActionID: a.ID, Tool: a.Tool, Payload: redact(tool, payload), Fields: missing,
			Secret: secretPaths(tool, missing), Suggestions: e.inputSuggestions(ctx, run, tool, missing),
		}, nil
	}
	if e.needsApproval(run, a) && !approvedAs(approved, redact(tool, payload)) {
		// Nobody is asked to approve a payload Tools.Call would refuse.
		if err := tool.ValidateInput(payload); err != nil {
			return o, nil, err
		}
		reason := run.Policy[a.ID].Reason
		if reason == "" {
			reason = "step approval is on"
		}
		in := &contracts.Interrupt{
			Kind: contracts.InterruptStepApproval, Message: "approve, edit or skip: " + describeAction(a) + " (" + reason + ")",
			PlanVersion: version, ActionID: a.ID, Tool: a.Tool, Payload: redact(tool, payload), Attempt: attempt,
		}
		if !e.approvedByMemory(ctx, run, in) {
			return o, in, nil
		}
	}
	o.started = contracts.StepRecord{
		ActionID: a.ID, Tool: a.Tool, PlanVersion: version, Attempt: attempt,
		IdempotencyKey: stepKey(run, version, a.ID, attempt),
		Payload:        payload, Status: contracts.StepStarted, StartedAt: e.now(),
	}
	return o, nil, nil
}

// needsApproval: policy asked for confirmation (answered in advance only
// by AutoApprovePolicy, a person's own --yes), or step approval is on
// (answered by AutoApprove).
func (e *Engine) needsApproval(run *contracts.Run, a contracts.Action) bool {
	if run.Policy[a.ID].Decision == contracts.PolicyRequireConfirm {
		return !run.Options.AutoApprovePolicy
	}
	h := e.hitl(run)
	return h.Enabled && h.StepApproval && !run.Options.AutoApprove
}

// approvedPayload reads the person's decisions on this action: the
// payload they gave (an edit, a retry's payload, input for missing fields
// merged into the payload the interrupt showed) or, for the attempt a step
// approval asked about, the payload it showed, never a fresh binding a
// model may fill differently; with real values put back where secret
// fields hold the marker (restoreSecrets), and the paths of those it
// could not put back (missing). approved lists the payloads a
// person approved, redacted as they saw them: an approval holds for that
// payload only, so a retry whose payload the critic or the filler changed
// is asked about again.
func (e *Engine) approvedPayload(run *contracts.Run, version int, a contracts.Action, tool *contracts.Tool, state map[string]any, attempt int) (payload json.RawMessage, missing []string, approved []json.RawMessage, err error) {
	for _, d := range run.Decisions {
		in := d.Interrupt
		if in.PlanVersion != version || in.ActionID != a.ID {
			continue
		}
		switch {
		case in.Kind == contracts.InterruptStepApproval && d.Decision.Kind == contracts.DecisionApprove:
			approved = append(approved, in.Payload)
			if in.Attempt == attempt {
				payload = in.Payload
			}
		case in.Kind == contracts.InterruptStepApproval && d.Decision.Kind == contracts.DecisionEdit,
			in.Kind == contracts.InterruptStepFailed && d.Decision.Kind == contracts.DecisionRetry && len(d.Decision.Payload) > 0:
			payload = d.Decision.Payload // the person's own payload, for this attempt and any retry
			approved = append(approved, redact(tool, payload))
		case in.Kind == contracts.InterruptInputRequired:
			merged, err := applyAnswers(in.Payload, d.Decision.Answers)
			if err != nil {
				return nil, nil, nil, err
			}
			payload = merged
		}
	}
	payload, missing, err = e.restoreSecrets(run, version, a, tool, state, payload)
	return payload, missing, approved, err
}

// approvedAs reports whether a person approved payload (redacted): the
// same JSON value as one of approved, whatever its key order or spacing.
func approvedAs(approved []json.RawMessage, payload json.RawMessage) bool {
	want, err := contracts.DecodeJSON(payload)
	if err != nil {
		return false
	}
	for _, p := range approved {
		if got, err := contracts.DecodeJSON(p); err == nil && reflect.DeepEqual(got, want) {
			return true
		}
	}
	return false
}

// answerPath is an answer's payload path ("$.a.b", "$a.b", ".a.b" or
// "a.b") as its segments: how applyAnswers reads it, and so how a secret
// field must be recognised (secretField).
func answerPath(path string) []string {
	return strings.Split(strings.TrimPrefix(strings.TrimPrefix(path, "$"), "."), ".")
}

// applyAnswers sets answered fields ("$.a.b", "a.b" or "a") in payload.
func applyAnswers(payload json.RawMessage, answers map[string]any) (json.RawMessage, error) {
	v, err := contracts.DecodeJSON(payload)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "payload is not an object").With("field", "payload")
	}
	for path, val := range answers {
		if pathTooDeep(strings.TrimPrefix(path, "$.")) {
			return nil, contracts.Errorf(contracts.CodeInvalidInput, "answers: field %q nests deeper than %d levels", shortPath(path), contracts.MaxJSONDepth).
				With("field", "answers").With("path", shortPath(path)).With("limit", contracts.MaxJSONDepth)
		}
		parts := answerPath(path)
		cur := obj
		for i, p := range parts {
			if i == len(parts)-1 {
				cur[p] = val
				break
			}
			next, ok := cur[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[p] = next
			}
			cur = next
		}
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "answers: %w", err).With("field", "answers")
	}
	return b, nil
}

// checkBoundSize refuses, before anything is copied, an action whose
// bindings would put more of the run's state into one payload than
// contracts.MaxMessageBytes, the most a tool source may send Ordo and so
// the most one call may carry: a plan may bind one large result into many
// fields, and 500 bindings of a 1 MiB text built a 500 MB payload, a 7.7 GB
// process and a failed attempt whose record the store could not hold.
func checkBoundSize(run *contracts.Run, a contracts.Action, tool *contracts.Tool) error {
	n := 0
	for _, key := range a.InputBindings {
		n += len(run.State[key])
	}
	props, _ := tool.InputFields()
	for _, key := range a.Requires {
		_, bound := a.InputBindings[key]
		if _, literal := a.Inputs[key]; props[key] && !bound && !literal {
			n += len(run.State[key])
		}
	}
	if n > contracts.MaxMessageBytes {
		return contracts.Errorf(contracts.CodeInvalidInput, "input_bindings would put %d bytes of state into one payload, more than the %d a call may carry",
			n, contracts.MaxMessageBytes).With("action", a.ID).With("field", "input_bindings").With("size", n).With("limit", contracts.MaxMessageBytes)
	}
	return nil
}

// planBound is the payload the plan itself gives action a: its literal
// inputs (where the plan's author wrote contracts.MissingWord, the
// contracts.Missing marker), its input_bindings and the required state
// keys named like schema fields (as they are: state is data) — no model
// call, so the same every time it is asked.
func planBound(a contracts.Action, tool *contracts.Tool, state map[string]any) (map[string]any, error) {
	payload := contracts.MarkMissing(cloneValue(a.Inputs)).(map[string]any)
	// Shorter paths first, so "values" bound whole is then refined by
	// "values.page_url".
	var fields []string
	if len(a.InputBindings) > 0 {
		fields = slices.SortedFunc(maps.Keys(a.InputBindings), func(x, y string) int {
			if c := strings.Count(x, ".") - strings.Count(y, "."); c != 0 {
				return c
			}
			return strings.Compare(x, y)
		})
	}
	for _, field := range fields {
		if v, ok := state[a.InputBindings[field]]; ok {
			if err := setPath(payload, field, cloneValue(v)); err != nil {
				return nil, contracts.AsError(err).With("action", a.ID)
			}
		}
	}
	props, _ := tool.InputFields()
	for _, key := range a.Requires {
		if _, bound := payload[key]; !bound && props[key] {
			payload[key] = state[key]
		}
	}
	return payload, nil
}

// bind builds a payload from what the plan gives (planBound). Only if required fields are still
// unbound (or a critic asked for changes) does one filler LLM call fill
// the rest; without a model, or where the model wrote it did not know
// (contracts.MissingWord), they are missing: left out of the payload and
// their paths returned, to be asked of a person (input_required). The
// filler never writes a secret field: a model cannot know a credential,
// and one it made up or copied would reach the tool unseen, so an
// unbound one is asked of a person too.
func (e *Engine) bind(ctx context.Context, run *contracts.Run, version int, a contracts.Action, tool *contracts.Tool, state map[string]any, feedback string) (json.RawMessage, []string, error) {
	if err := checkBoundSize(run, a, tool); err != nil {
		return nil, nil, err
	}
	payload, err := planBound(a, tool, state)
	if err != nil {
		return nil, nil, err
	}
	_, required := tool.InputFields()
	var unbound []string
	for _, f := range required {
		if _, ok := payload[f]; !ok && !secretField(tool, f) {
			unbound = append(unbound, f)
		}
	}
	if (len(unbound) > 0 || feedback != "") && e.model(ctx) != nil {
		known, raw := map[string]any{}, map[string]json.RawMessage{}
		for _, k := range a.Requires {
			known[k], raw[k] = state[k], run.State[k]
		}
		if shown, cut := promptState(raw, e.stateLimit()); cut {
			for k, v := range shown {
				known[k] = v
			}
		}
		in := map[string]any{
			"action": shownAction(a, tool), "input_schema": tool.Contract.InputSchema, "state_memory": known,
			"bound_payload": contracts.Redact(payload, tool.Contract.SecretFields),
			"timezone":      run.Options.Timezone, "locale": run.Options.Locale, "now": e.localNow(run), "user_request": run.Goal, "unbound_required": unbound,
		}
		if feedback != "" {
			in["critic_feedback"] = feedback
		}
		text, err := e.complete(ctx, run, "filler", in, tool.Contract.InputSchema)
		if err != nil {
			return nil, nil, err
		}
		filled, err := decodeObject(text)
		if err != nil {
			return nil, nil, contracts.Errorf(contracts.CodeLLMInvalidOutput, "payload filler for %s: %w", a.ID, err).With("action", a.ID)
		}
		contracts.MarkMissing(filled)
		for k, v := range withoutSecrets(tool, filled) {
			if _, bound := payload[k]; !bound || feedback != "" {
				payload[k] = v
			}
		}
	}
	for _, f := range required {
		if _, ok := payload[f]; !ok {
			payload[f] = contracts.Missing
		}
	}
	missing := contracts.TakeMissing(payload)
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, nil, contracts.Errorf(contracts.CodeInvalidInput, "payload of %s: %w", a.ID, err).With("action", a.ID)
	}
	return b, missing, nil
}

func decodeObject(text string) (map[string]any, error) {
	raw, err := contracts.ExtractJSON(text)
	if err != nil {
		return nil, err
	}
	v, err := contracts.DecodeJSON(raw)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, contracts.Errorf(contracts.CodeInvalidJSON, "want a JSON object")
	}
	return obj, nil
}

func redact(tool *contracts.Tool, payload json.RawMessage) json.RawMessage {
	if len(tool.Contract.SecretFields) == 0 {
		return payload
	}
	if r, ok := contracts.Redact(payload, tool.Contract.SecretFields).(json.RawMessage); ok {
		return r
	}
	return nil
}

// call runs one tool call in a worker goroutine. Cancellation of ctx does
// not abort a call in flight: the run stops at the next step boundary.
// The call is a span of its own inside a trace (the run's span is a real
// one when tracing is on); without one it costs no span, as host calls do
// (internal/grpctrace).
func (e *Engine) call(ctx context.Context, o outcome) outcome {
	ctx = context.WithoutCancel(ctx)
	if trace.SpanContextFromContext(ctx).IsValid() {
		var span trace.Span
		ctx, span = startSpan(ctx, "ordo.step", attribute.String("ordo.action.id", o.action.ID),
			attribute.String("ordo.tool", o.tool.Name()), attribute.Int("ordo.step.attempt", o.started.Attempt))
		defer func() { endSpan(span, nil, o.err) }()
	}
	var opts []host.CallOption
	if r := o.action.Retries; r != nil && r.MaxAttempts > 0 {
		// The action's retries bound the one retry loop, the host's: it
		// repeats errors marked Retryable under the call's own key.
		backoff := time.Duration(r.BackoffMS) * time.Millisecond
		opts = append(opts, host.WithRetries(host.RetryPolicy{MaxAttempts: r.MaxAttempts, BaseDelay: backoff, MaxDelay: max(backoff, 2*time.Second)}))
	}
	if o.action.TimeoutMS > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(o.action.TimeoutMS)*time.Millisecond)
		defer cancel()
	}
	var toolLLM []llm.Usage
	ctx = llm.WithObserver(ctx, func(_ string, u llm.Usage) { toolLLM = append(toolLLM, u) })
	o.result, o.err = e.deps.Tools.Call(ctx, o.tool.Name(), o.started.Payload, o.started.IdempotencyKey, opts...)
	o.started.Payload = redact(o.tool, o.started.Payload)
	o.toolLLM = toolLLM
	return o
}

// verify checks a result by code — the keys the action declared it
// produces (which later actions require), each success criterion against
// the state as it would become; then, in llm mode, the critic. The output
// schema was checked by Tools.Call, once. It returns the state updates; with a missing produces key, the
// keys the valid result did yield come back beside the error.
func (e *Engine) verify(ctx context.Context, run *contracts.Run, a contracts.Action, tool *contracts.Tool, raw json.RawMessage, state map[string]any, attempt int) (map[string]any, error) {
	result, err := contracts.DecodeJSON(raw)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeToolInvalidOutput, "result of %s: %w", a.ID, err).With("action", a.ID)
	}
	values, err := tool.ProduceKeys(result, a.Produces)
	if err != nil {
		// The result is valid; only the plan's promise was wrong. Keep what
		// it did yield, so a re-plan builds on it instead of repeating it.
		partial := map[string]any{}
		for _, k := range a.Produces {
			if v, err := tool.ProduceKeys(result, []string{k}); err == nil {
				partial[k] = v[k]
			}
		}
		return partial, contracts.Errorf(contracts.CodeMissingPath, "action %s did not produce what it promised: %w", a.ID, err).
			With("action", a.ID).With("key", contracts.AsError(err).Details["key"])
	}
	var next map[string]any // the state as it would become, for the criteria
	if len(a.SuccessCriteria) > 0 {
		next = maps.Clone(state)
		maps.Copy(next, values)
	}
	for _, src := range a.SuccessCriteria {
		c, err := contracts.ParseCriterion(src)
		if err != nil {
			return nil, err
		}
		if ok, why := c.Check(next); !ok {
			return nil, contracts.Errorf(contracts.CodeVerificationFailed, "action %s: %s: %s", a.ID, src, why).With("action", a.ID).With("criterion", src)
		}
	}
	if e.cfg.Verifier.Mode == VerifyLLM && (len(e.cfg.Verifier.Tools) == 0 || slices.Contains(e.cfg.Verifier.Tools, a.Tool)) {
		if err := e.critic(ctx, run, a, tool, result, values, attempt); err != nil {
			return nil, err
		}
	}
	return values, nil
}

type verdict struct {
	Score    *float64 `json:"score"`
	Status   string   `json:"status"`
	Reason   string   `json:"reason"`
	Feedback string   `json:"feedback"`
	Next     string   `json:"next"`
	Question string   `json:"question"`
	Patch    struct {
		SuggestedPayloadOverrides map[string]any `json:"suggested_payload_overrides"`
	} `json:"patch"`
}

const verdictSchema = `{"type":"object","required":["score","status"],"properties":{"score":{"type":"number","minimum":0,"maximum":1},"status":{"enum":["pass","fail"]},"reason":{"type":"string"},"feedback":{"type":"string"},"next":{"enum":["retry","ask_user","replan"]},"question":{"type":"string"},"patch":{"type":"object","properties":{"suggested_payload_overrides":{"type":"object"}}}}}`

// critic asks the verifier model to score the latest attempt's result.
// Below the threshold it fails the attempt with the verdict in the error's
// details: feedback and payload overrides for the retry (prepare), or the
// critic's question for a person (details.ask_user, kept apart from
// details.next so the attempt stays retryable: prepare stops at a
// verify_question interrupt before the next attempt).
func (e *Engine) critic(ctx context.Context, run *contracts.Run, a contracts.Action, tool *contracts.Tool, result any, produced map[string]any, attempt int) error {
	in := map[string]any{
		"action": shownAction(a, tool), "success_criteria": a.SuccessCriteria, "output_schema": tool.Contract.OutputSchema,
		"result": result, "produced": produced, "attempt": attempt, "threshold": e.cfg.Verifier.Threshold,
	}
	text, err := e.complete(ctx, run, "verifier", in, []byte(verdictSchema))
	if err != nil {
		return err
	}
	var v verdict
	raw, err := contracts.ExtractJSON(text)
	if err == nil {
		// Bounded like every model answer: the run keeps the overrides.
		err = contracts.CheckJSONDepth(raw, contracts.MaxJSONDepth)
	}
	if err == nil {
		err = json.Unmarshal(raw, &v)
	}
	if err != nil || v.Score == nil {
		return contracts.Errorf(contracts.CodeLLMInvalidOutput, "critic answer for %s is unusable: %v", a.ID, err).With("action", a.ID)
	}
	if *v.Score >= e.cfg.Verifier.Threshold {
		return nil
	}
	ce := contracts.Errorf(contracts.CodeVerificationFailed, "critic scored %s %s below %s: %s", a.ID,
		strconv.FormatFloat(*v.Score, 'g', 3, 64), strconv.FormatFloat(e.cfg.Verifier.Threshold, 'g', 3, 64), v.Reason).
		With("action", a.ID).With("score", *v.Score).With("feedback", v.Feedback)
	if len(v.Patch.SuggestedPayloadOverrides) > 0 {
		ce = ce.With("payload_overrides", v.Patch.SuggestedPayloadOverrides)
	}
	if v.Next == "ask_user" {
		return ce.With("ask_user", criticQuestion(v))
	}
	return ce.With("next", v.Next)
}

func describeAction(a contracts.Action) string {
	if a.Summary != "" {
		return a.Summary
	}
	return a.Tool
}
