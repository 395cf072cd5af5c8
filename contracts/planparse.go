package contracts

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed action_plan.schema.json
var planSchemaJSON []byte

const planSchemaURL = "https://ordo.run/schemas/action-plan.schema.json"

var planSchema = sync.OnceValue(func() *jsonschema.Schema {
	sch, err := compileSchema(planSchemaURL, planSchemaJSON)
	if err != nil {
		panic("contracts: embedded action_plan.schema.json does not compile: " + err.Error())
	}
	return sch
})

// PlanSchema returns the Action Plan JSON Schema (draft 2020-12), for
// planners' structured output and for callers who write plans themselves.
func PlanSchema() []byte { return append([]byte(nil), planSchemaJSON...) }

// ParsePlan reads a plan from an LLM's answer: it extracts the JSON object,
// coerces dependency references, validates against the schema, and only
// then decodes. Every failure is coded; nothing is dropped or guessed.
func ParsePlan(text []byte) (*Plan, error) {
	raw, err := ExtractJSON(string(text))
	if err != nil {
		return nil, err
	}
	v, err := DecodeJSON(raw)
	if err != nil {
		return nil, err
	}
	if err := coerceDependencies(v); err != nil {
		return nil, err
	}
	if err := ValidatePlanSchema(v); err != nil {
		return nil, err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, Errorf(CodeInternal, "re-encoding plan: %w", err)
	}
	var p Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, Errorf(CodeSchemaViolation, "plan does not decode: %w", err)
	}
	p.parsed, _ = encodePlan(&p)
	return &p, nil
}

// ValidatePlan checks a plan that arrived as a value (a caller's or an
// edited plan) against the schema. Nil requires/produces lists count as empty.
// A plan whose encoding is still the one ParsePlan returned it with is
// valid without another schema pass: ParsePlan validated the text it came
// from, and a plan it accepts always validates as a value (FuzzParsePlan
// holds it to that). Every plan is so validated once, however many
// times it is run.
func ValidatePlan(p *Plan) error {
	if p == nil {
		return Errorf(CodeInvalidInput, "no plan").With("field", "plan")
	}
	data, err := encodePlan(p)
	if err != nil {
		return Errorf(CodeInvalidInput, "plan is not JSON-encodable: %w", err).With("field", "plan")
	}
	if p.parsed != nil && bytes.Equal(data, p.parsed) {
		return nil
	}
	return validateEncoded(data)
}

// encodePlan is the JSON ValidatePlan checks: p with nil requires and
// produces lists as empty ones.
func encodePlan(p *Plan) ([]byte, error) {
	if !slices.ContainsFunc(p.Actions, func(a Action) bool { return a.Requires == nil || a.Produces == nil }) {
		return json.Marshal(p)
	}
	cp := *p
	cp.Actions = make([]Action, len(p.Actions))
	for i, a := range p.Actions {
		if a.Requires == nil {
			a.Requires = []string{}
		}
		if a.Produces == nil {
			a.Produces = []string{}
		}
		cp.Actions[i] = a
	}
	return json.Marshal(cp)
}

// validateEncoded validates an encoded plan against the schema.
func validateEncoded(data []byte) error {
	v, err := DecodeJSON(data)
	if err != nil {
		return err
	}
	return ValidatePlanSchema(v)
}

// ValidatePlanSchema validates a decoded plan (JSON-like value) against
// the Action Plan schema: CodeSchemaViolation with instance and keyword
// locations, and "action" when the violation is inside one action.
func ValidatePlanSchema(v any) error {
	jv, err := jsonValue(v)
	if err != nil {
		return Errorf(CodeSchemaViolation, "plan: %w", err)
	}
	err = validate(planSchema(), jv, CodeSchemaViolation, "plan")
	if err == nil {
		return nil
	}
	e := AsError(err)
	loc, _ := e.Details["instance_location"].(string)
	if rest, ok := strings.CutPrefix(loc, "/actions/"); ok {
		idx, _, _ := strings.Cut(rest, "/")
		if i, convErr := strconv.Atoi(idx); convErr == nil {
			e = e.With("action", actionName(actionsOf(jv), i))
		}
	}
	return e
}

func actionsOf(v any) []any {
	obj, _ := v.(map[string]any)
	actions, _ := obj["actions"].([]any)
	return actions
}

// actionName is the action's id if it has one, else "actions[i]".
func actionName(actions []any, i int) string {
	if i >= 0 && i < len(actions) {
		if a, ok := actions[i].(map[string]any); ok {
			if id, ok := a["id"].(string); ok && id != "" {
				return id
			}
		}
	}
	return "actions[" + strconv.Itoa(i) + "]"
}

var (
	indexRef  = regexp.MustCompile(`(?i)^\s*(?:(?:tasks?|steps?|actions?)[._ -]?)?#?([0-9]+)\s*$`)
	idPattern = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_\-]{0,63}$`) // the schema's action id pattern
)

// coerceDependencies rewrites depends_on entries that LLMs write as
// positions ("tasks.1", "step_1", "1", 1) into the ids of those 1-based
// actions. An existing id always wins over an index. A
// position out of range, or text that is neither a position nor an id, is
// CodeAmbiguousReference; a well-formed unknown id is left for CheckPlan
// (CodeUnknownDependency), and other JSON types for the schema.
func coerceDependencies(v any) error {
	actions := actionsOf(v)
	ids := make(map[string]bool, len(actions))
	for i := range actions {
		if a, ok := actions[i].(map[string]any); ok {
			if id, ok := a["id"].(string); ok {
				ids[id] = true
			}
		}
	}
	for i, av := range actions {
		a, ok := av.(map[string]any)
		if !ok {
			continue
		}
		deps, ok := a["depends_on"].([]any)
		if !ok {
			continue
		}
		for j, d := range deps {
			var ref string
			switch d := d.(type) {
			case string:
				if ids[d] {
					continue
				}
				ref = d
			case json.Number:
				ref = d.String()
			default:
				continue
			}
			if !indexRef.MatchString(ref) && idPattern.MatchString(ref) {
				continue // a plain unknown id: CheckPlan reports CodeUnknownDependency
			}
			id, ok := resolveIndex(actions, ref)
			if !ok {
				name := actionName(actions, i)
				return Errorf(CodeAmbiguousReference, "action %s: depends_on[%d] %q names no single action", name, j, ref).
					With("action", name).With("reference", ref)
			}
			deps[j] = id
		}
	}
	return nil
}

func resolveIndex(actions []any, ref string) (string, bool) {
	m := indexRef.FindStringSubmatch(ref)
	if m == nil {
		return "", false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n < 1 || n > len(actions) {
		return "", false
	}
	a, ok := actions[n-1].(map[string]any)
	if !ok {
		return "", false
	}
	id, ok := a["id"].(string)
	return id, ok && id != ""
}
