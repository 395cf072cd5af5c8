package agent

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// FuzzApplyAnswers: answers for input_required never panic, and a payload
// that is accepted stays a JSON object.
func FuzzApplyAnswers(f *testing.F) {
	f.Add(`{"channel":"MISSING","text":"hi"}`, "$.channel", "#general")
	f.Add(`{"a":{"b":"MISSING"}}`, "a.b", "x")
	f.Add(`[1,2]`, "x", "y")
	f.Add(`{"a":1}`, "$..", "")
	f.Fuzz(func(t *testing.T, payload, path, value string) {
		out, err := applyAnswers(json.RawMessage(payload), map[string]any{path: value})
		if err != nil {
			return
		}
		var obj map[string]any
		if err := json.Unmarshal(out, &obj); err != nil {
			t.Fatalf("accepted payload became %s: %v", out, err)
		}
	})
}

// FuzzDecodeObject: model answers (filler, critic) give an object or an error.
func FuzzDecodeObject(f *testing.F) {
	f.Add(`{"score":0.9,"status":"pass"}`)
	f.Add("Sure:\n```json\n{\"channel\":\"MISSING\"}\n```")
	f.Add(`[1]`)
	f.Add(`{"a":`)
	f.Fuzz(func(t *testing.T, text string) {
		obj, err := decodeObject(text)
		if err == nil && obj == nil {
			t.Fatal("nil object without error")
		}
	})
}

// FuzzClonePlan: clonePlan gives what a JSON round trip gives, and the copy
// shares nothing with the plan it was made from.
func FuzzClonePlan(f *testing.F) {
	f.Add(`{"version":"1.0","goal":"g","timezone":"UTC","actions":[{"id":"a","tool":"t.x","intent":"read","requires":[],"produces":["k"]}]}`)
	f.Add(`{"goal":"g","context":{"user_text":"u","tool_candidates":[]},"final_response":{"include_links":false},` +
		`"constraints":{"max_actions":3,"allow_parallel":true,"allowed_services":["n"]},"clarification_questions":["q?"],` +
		`"actions":[{"id":"a","requires":null,"success_criteria":[],"risk":{"level":"write","tags":["pii"]},"policy_hints":{"contains_pii":true},` +
		`"depends_on":["b"],"input_bindings":{"x.y":"k"},"inputs":{"n":1,"o":{"l":[1,"s",null,true]}},"retries":{"max_attempts":2}}]}`)
	f.Add(`{"actions":[{"input_bindings":{},"inputs":{},"produces":[],"risk":{}}],"context":{}}`)
	f.Fuzz(func(t *testing.T, text string) {
		var p contracts.Plan
		if json.Unmarshal([]byte(text), &p) != nil {
			return
		}
		var want contracts.Plan
		b, _ := json.Marshal(&p)
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		got := clonePlan(&p)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("clone\n%+v\nround trip\n%+v", got, want)
		}
		before, _ := json.Marshal(&p)
		for i := range got.Actions {
			a := &got.Actions[i]
			for _, l := range [][]string{a.Requires, a.Produces, a.SuccessCriteria, a.DependsOn} {
				for j := range l {
					l[j] = "changed"
				}
			}
			for k := range a.InputBindings {
				a.InputBindings[k] = "changed"
			}
			for k := range a.Inputs {
				a.Inputs[k] = "changed"
			}
			if a.Risk != nil {
				a.Risk.Level = "changed"
			}
		}
		if got.Constraints != nil {
			got.Constraints.MaxActions++
		}
		if after, _ := json.Marshal(&p); string(before) != string(after) {
			t.Fatal("changing the clone changed the plan")
		}
	})
}
