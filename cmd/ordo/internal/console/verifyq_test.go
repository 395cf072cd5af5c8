package console

import (
	"context"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// The critic's question: "a TEXT" answers it, "k" keeps the result, "r"
// rejects; an answer without text and anything else are asked again.
func TestDecideVerifyQuestion(t *testing.T) {
	in := contracts.Interrupt{Kind: contracts.InterruptVerifyQuestion, ActionID: "g1", Tool: "llm.generate", Questions: []string{"Which season?"}, Payload: []byte(`{"text":"draft"}`)}
	for input, want := range map[string]contracts.Decision{
		"a\nmaybe\na winter\n": {Kind: contracts.DecisionAnswer, Answers: map[string]any{"Which season?": "winter"}},
		"k\n":                  {Kind: contracts.DecisionApprove},
		"r too dark\n":         {Kind: contracts.DecisionReject, Note: "too dark"},
	} {
		var out strings.Builder
		d, err := NewPrompter(strings.NewReader(input), &out, "ada").Decide(context.Background(), interrupted(in))
		if err != nil || d.Kind != want.Kind || d.By != "ada" || (want.Note != "" && d.Note != want.Note) ||
			(want.Answers != nil && d.Answers["Which season?"] != "winter") {
			t.Errorf("%q: %+v %v", input, d, err)
		}
		if strings.HasPrefix(input, "a\n") && (!strings.Contains(out.String(), "  give the answer after a\n") || !strings.Contains(out.String(), "  answer a TEXT, k or r\n")) {
			t.Errorf("%q: the refusals not said: %q", input, out.String())
		}
		if !strings.Contains(out.String(), "the critic asks: Which season?") || !strings.Contains(out.String(), `{"text":"draft"}`) {
			t.Errorf("%q: shown %q", input, out.String())
		}
	}
}
