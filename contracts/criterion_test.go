package contracts

import (
	"encoding/json"
	"testing"
)

func TestCriteria(t *testing.T) {
	state := map[string]any{
		"page_url": "https://notion.so/page_123",
		"empty":    "",
		"nothing":  nil,
		"rows":     json.RawMessage(`[[1,2],[3,4],[5,6]]`),
		"obj":      map[string]any{"k": 1},
		"status":   "ok",
		"count":    3,
		"ratio":    json.Number("1.50"),
		"done":     true,
		"name":     "회의 기록",
		"tags":     []string{"a"},
	}
	cases := []struct {
		crit string
		ok   bool
	}{
		{"page_url exists", true},
		{"summary exists", false},
		{"nothing exists", false},
		{"empty exists", true},
		{"page_url non-empty", true},
		{"empty non-empty", false},
		{"nothing non-empty", false},
		{"count non-empty", true},
		{"status == ok", true},
		{`status == "ok"`, true},
		{"status != ok", false},
		{"status == failed", false},
		{"count == 3", true},
		{"count == 3.0", true},
		{"ratio == 1.5", true},
		{"count == \"3\"", false},
		{"done == true", true},
		{"nothing == null", true},
		{`obj == {"k": 1.0}`, true},
		{`obj == {"k": 2}`, false},
		{"missing_key == ok", false},
		{"len(rows) >= 3", true},
		{"len(rows) > 3", false},
		{"len(rows) == 3", true},
		{"len(rows) != 3", false},
		{"len(rows) < 4", true},
		{"len(rows) <= 2", false},
		{"len( name ) == 5", true},
		{"len(obj) == 1", true},
		{"len(tags) >= 1", true},
		{"len(count) > 0", false},
		{"len(absent) > 0", false},
		{"  page_url   exists  ", true},
	}
	for _, tc := range cases {
		c, err := ParseCriterion(tc.crit)
		if err != nil {
			t.Fatalf("%q: %v", tc.crit, err)
		}
		ok, why := c.Check(state)
		if ok != tc.ok || why == "" {
			t.Fatalf("%q: ok = %v (%s), want %v", tc.crit, ok, why, tc.ok)
		}
	}
	for _, bad := range []string{
		"", "page created successfully", "page_url", "exists", "len(rows) >= -1", "len(rows) >= many",
		"status == two words", "status ==", "len(rows) => 3", "1key exists", "status == {bad",
		"len(rows) >= 99999999999999999999999",
	} {
		_, err := ParseCriterion(bad)
		if e := wantCode(t, err, CodeInvalidInput); e.Details["field"] != "success_criteria" {
			t.Fatalf("%q: details %v", bad, e.Details)
		}
	}
	ok, why := Criterion{}.Check(state)
	if ok || why == "" {
		t.Fatal("the zero Criterion passed")
	}
}
