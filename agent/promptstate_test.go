package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// A state that fits goes to the prompt as it is; a larger one keeps the
// values that fit their share and shows the others cut and marked, within
// the bound.
func TestPromptState(t *testing.T) {
	small := map[string]json.RawMessage{"a": json.RawMessage(`{"id":"x"}`), "b": json.RawMessage(`"short"`)}
	if got, cut := promptState(small, 1024); cut || fmt.Sprint(got) != fmt.Sprint(small) {
		t.Fatalf("a small state was changed: %s", got)
	}
	big := strings.Repeat("é<", 1<<20)
	state := map[string]json.RawMessage{"a": small["a"], "b": small["b"], "big": json.RawMessage(`"` + big + `"`),
		"list": json.RawMessage(`[` + strings.Repeat(`"item",`, 50000) + `"end"]`)}
	for _, limit := range []int{4096, 65536} {
		got, cut := promptState(state, limit)
		data, err := json.Marshal(got)
		if err != nil || !cut || len(data) > limit {
			t.Fatalf("limit %d: %d bytes, cut %v, %v", limit, len(data), cut, err)
		}
		if string(got["a"]) != string(small["a"]) || string(got["b"]) != string(small["b"]) {
			t.Fatalf("limit %d: values that fit were cut: %s", limit, data)
		}
		for _, k := range []string{"big", "list"} {
			var m map[string]struct {
				Bytes int    `json:"bytes"`
				Head  string `json:"head"`
			}
			if err := json.Unmarshal(got[k], &m); err != nil || m[truncatedKey].Bytes != len(state[k]) ||
				len(m[truncatedKey].Head) < limit/8 || !strings.HasPrefix(string(state[k]), m[truncatedKey].Head) {
				t.Fatalf("limit %d: %s shown as %.200s (%v)", limit, k, got[k], err)
			}
		}
	}
	if _, cut := promptState(state, -1); cut {
		t.Fatal("no bound cut the state")
	}
}

// The composer is shown a run's large state within the bound, marked cut;
// PromptStateBytes raises the bound.
func TestComposerStateBounded(t *testing.T) {
	big := strings.Repeat("rain ", 200000)
	plan := `{"version":"1.0","goal":"forecast","timezone":"UTC","actions":[
	 {"id":"a1","tool":"weather.get","intent":"read","requires":[],"produces":["forecast"],"inputs":{"city":"Seoul"}}]}`
	for _, limit := range []int{0, 2 << 20} {
		m, srv := scripted(t, composer("Rain."))
		tt := newTools(t, weatherTool(returns(map[string]any{"forecast": big})))
		run, err := New(Config{PromptStateBytes: limit}, Deps{Tools: tt, LLM: m}).Run(context.Background(), Request{Plan: mustPlan(t, plan)})
		wantStatus(t, run, err, contracts.RunCompleted)
		prompt := srv.Requests()[0].Messages[1].Content
		if limit == 0 && (len(prompt) > DefaultPromptStateBytes+2048 || !strings.Contains(prompt, truncatedKey)) {
			t.Fatalf("default bound: a prompt of %d bytes", len(prompt))
		}
		if limit > 0 && (!strings.Contains(prompt, big) || strings.Contains(prompt, truncatedKey)) {
			t.Fatalf("raised bound: a prompt of %d bytes", len(prompt))
		}
	}
}
