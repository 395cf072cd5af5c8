package console

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

func TestDecideStepFailedAndPaused(t *testing.T) {
	plan := filepath.Join(t.TempDir(), "rest.json")
	if err := os.WriteFile(plan, []byte(`{"version":"1.0","goal":"g","timezone":"UTC","actions":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	failed := contracts.Interrupt{Kind: contracts.InterruptStepFailed, ActionID: "a1", Tool: "x.y",
		Error: &contracts.Error{Code: contracts.CodeToolFailed, Message: "down"}, Payload: []byte(`{"q":1}`)}
	paused := contracts.Interrupt{Kind: contracts.InterruptPaused}
	cases := []struct {
		in    contracts.Interrupt
		input string
		want  contracts.DecisionKind
		check func(d contracts.Decision) bool
	}{
		{failed, "t\n", contracts.DecisionRetry, func(d contracts.Decision) bool { return d.Payload == nil }},
		{failed, "t {bad\nretry {\"q\":2}\n", contracts.DecisionRetry, func(d contracts.Decision) bool { return string(d.Payload) == `{"q":2}` }},
		{failed, "what\ns\n", contracts.DecisionSkip, nil},
		{failed, "p\n", contracts.DecisionReplan, nil},
		{failed, "a gave up\n", contracts.DecisionAbort, func(d contracts.Decision) bool { return d.Note == "gave up" }},
		{paused, "c\n", contracts.DecisionContinue, nil},
		{paused, "e\ne " + plan + "\n", contracts.DecisionEdit, func(d contracts.Decision) bool { return d.Plan != nil }},
		{paused, "a\n", contracts.DecisionAbort, nil},
	}
	for _, tc := range cases {
		var out strings.Builder
		d, err := NewPrompter(strings.NewReader(tc.input), &out, "ada").Decide(context.Background(), interrupted(tc.in))
		if err != nil || d.Kind != tc.want || d.By != "ada" || (tc.check != nil && !tc.check(d)) {
			t.Errorf("%s %q: %+v %v\n%s", tc.in.Kind, tc.input, d, err, out.String())
		}
	}
}
