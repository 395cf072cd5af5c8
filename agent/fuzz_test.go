package agent

import (
	"encoding/json"
	"testing"
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
