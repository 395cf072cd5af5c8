package contracts

import (
	"slices"
	"strings"
	"testing"
)

func TestParsePlannerAnswer(t *testing.T) {
	p, phrases, err := ParsePlannerAnswer(readPlan(t, "scenario1.json"))
	if err != nil || p == nil || phrases != nil {
		t.Fatalf("a plan: %v, %q, %v", p, phrases, err)
	}
	p, phrases, err = ParsePlannerAnswer([]byte("```json\n{\"search_tools\": [\" create notes page \", \"summarize meeting\"]}\n```"))
	if err != nil || p != nil || !slices.Equal(phrases, []string{"create notes page", "summarize meeting"}) {
		t.Fatalf("a search: %v, %q, %v", p, phrases, err)
	}
	for _, bad := range []string{
		`{"search_tools": []}`,
		`{"search_tools": ["  "]}`,
		`{"search_tools": ["a", "b", "c", "d", "e", "f"]}`,
		`{"search_tools": "notes"}`,
		`{"search_tools": null}`,
		`{"search_tools": ["notes"], "version": "1.0"}`,
	} {
		_, _, err := ParsePlannerAnswer([]byte(bad))
		if CodeOf(err) != CodeSchemaViolation {
			t.Errorf("%s: got %v, want a schema violation", bad, err)
		}
	}
	// A plan answer keeps ParsePlan's strictness.
	if _, _, err := ParsePlannerAnswer([]byte(`{"version":"1.0","goal":"g","timezone":"UTC","actions":[],"extra":1}`)); CodeOf(err) != CodeSchemaViolation {
		t.Errorf("a plan with an unknown field: %v", err)
	}
	// ParsePlan itself never takes a search.
	if _, err := ParsePlan([]byte(`{"search_tools": ["notes"]}`)); CodeOf(err) != CodeSchemaViolation {
		t.Errorf("ParsePlan accepted a search: %v", err)
	}
}

// TestPlannerAnswerSchema: the combined schema (what the model is given)
// accepts exactly what ParsePlannerAnswer accepts on these samples.
func TestPlannerAnswerSchema(t *testing.T) {
	sch, err := compileSchema("https://ordo.run/schemas/planner-answer.schema.json", PlannerAnswerSchema())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		text string
		ok   bool
	}{
		{string(readPlan(t, "scenario2.json")), true},
		{`{"search_tools": ["create notes page"]}`, true},
		{`{"search_tools": []}`, false},
		{`{"search_tools": ["x"], "actions": []}`, false},
		{`{"version":"1.0"}`, false},
	} {
		v, err := DecodeJSON([]byte(c.text))
		if err != nil {
			t.Fatal(err)
		}
		if got := sch.Validate(v) == nil; got != c.ok {
			t.Errorf("schema on %.60s: valid %v, want %v", c.text, got, c.ok)
		}
	}
}

func FuzzParsePlannerAnswer(f *testing.F) {
	f.Add(readPlan(f, "scenario1.json"))
	f.Add([]byte(`{"search_tools": ["create notes page", "send message"]}`))
	f.Add([]byte(`{"search_tools": [" ", 3]}`))
	f.Fuzz(func(t *testing.T, text []byte) {
		p, phrases, err := ParsePlannerAnswer(text)
		if err != nil {
			if c := CodeOf(err); c.Category() != "validation" {
				t.Fatalf("non-validation code %d: %v", c, err)
			}
			if p != nil || phrases != nil {
				t.Fatalf("an error with a result: %v %q", p, phrases)
			}
			return
		}
		if (p == nil) == (phrases == nil) {
			t.Fatalf("want exactly one of a plan and phrases: %v %q", p, phrases)
		}
		if p != nil {
			if err := ValidatePlan(p); err != nil {
				t.Fatalf("a parsed plan does not re-validate: %v", err)
			}
			return
		}
		if len(phrases) == 0 || len(phrases) > SearchToolsMax {
			t.Fatalf("%d phrases", len(phrases))
		}
		for _, s := range phrases {
			if strings.TrimSpace(s) == "" || s != strings.TrimSpace(s) {
				t.Fatalf("phrase %q not trimmed or blank", s)
			}
		}
	})
}
