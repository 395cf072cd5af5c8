package prompts

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/contracts"
)

func TestDefaultsNameTheirRole(t *testing.T) {
	s := Defaults()
	for _, n := range []string{Planner, Replanner, Filler, Verifier, Composer} {
		if got := llmtest.RoleOf(s[n]); got != n {
			t.Errorf("%s prompt role = %q", n, got)
		}
	}
	if !strings.Contains(s[Filler], `"MISSING"`) || !strings.Contains(s[Planner], "ONLY from the tool candidates") {
		t.Error("seed 004 §4 rules missing from prompts")
	}
}

func TestOverrideReplacesOneFile(t *testing.T) {
	s, err := Load(fstest.MapFS{"composer.md": {Data: []byte("role: composer\nBe terse.")}})
	if err != nil {
		t.Fatal(err)
	}
	if s[Composer] != "role: composer\nBe terse." || s[Planner] != Defaults()[Planner] {
		t.Fatal("override not applied to exactly one prompt")
	}
	_, err = Load(fstest.MapFS{"planner.md": {Data: []byte("  \n")}})
	if contracts.CodeOf(err) != contracts.CodeInvalidConfig {
		t.Fatalf("empty override accepted: %v", err)
	}
}

// A file that overrides no prompt is refused, naming it; dot files pass.
func TestOverrideUnknownNameRefused(t *testing.T) {
	for _, name := range []string{"planer.md", "planner.txt", "notes"} {
		_, err := Load(fstest.MapFS{name: {Data: []byte("role: planner\nx")}})
		if contracts.CodeOf(err) != contracts.CodeInvalidConfig || contracts.AsError(err).Details["field"] != name {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Load(fstest.MapFS{".DS_Store": {Data: []byte("x")}, "verifier.md": {Data: []byte("role: verifier\nx")}}); err != nil {
		t.Fatal(err)
	}
}

// TestPlanRulesAreThePlannersRules: the rules an assistant gets (write_plan)
// are the planner prompt's own, in place, in the default and in an override
// that asks for them.
func TestPlanRulesAreThePlannersRules(t *testing.T) {
	rules := PlanRules()
	if !strings.HasPrefix(rules, "- Choose tools ONLY from the tool candidates") || strings.Contains(rules, "Output JSON only") {
		t.Fatalf("plan rules:\n%s", rules)
	}
	planner := Defaults()[Planner]
	if !strings.Contains(planner, "(version \"1.0\"). No prose, no code fences.\n"+rules+"- \"past_plans\"") || strings.Contains(planner, "{{") {
		t.Fatalf("planner prompt does not hold the rules in place:\n%s", planner)
	}
	s, err := Load(fstest.MapFS{"planner.md": {Data: []byte("role: planner\nMy rules:\n{{plan_rules}}\nEnd.")}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "role: planner\nMy rules:\n" + rules + "End."; s[Planner] != want {
		t.Fatalf("override = %q, want %q", s[Planner], want)
	}
}
