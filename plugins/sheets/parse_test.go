package sheets

import (
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

func TestParseRange(t *testing.T) {
	for in, want := range map[string]Range{
		"A1":             {1, 1, 1, 1},
		"a1:c10":         {1, 1, 3, 10},
		"$A$1:$C$10":     {1, 1, 3, 10},
		"Sheet1!B2:D":    {2, 2, 4, 0},
		"A:C":            {1, 1, 3, 0},
		"2:5":            {1, 2, 0, 5},
		"C10:A1":         {1, 1, 3, 10},
		"B2:5":           {2, 2, 0, 5},
		"AA1:ZZZ1048576": {27, 1, MaxCol, MaxRow},
		" B3 ":           {2, 3, 2, 3},
	} {
		got, err := ParseRange(in)
		if err != nil || got != want {
			t.Errorf("ParseRange(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
}

func TestParseRangeRefuses(t *testing.T) {
	for _, in := range []string{"", ":", "A", "1", "A1:", ":B2", "AAAA1", "A0", "1:C5", "A:C5", "A1B", "A1:B2:C3", "A1048577", "A-1", "Ä1"} {
		_, err := ParseRange(in)
		if e := contracts.AsError(err); err == nil || e.Code != contracts.CodeInvalidInput || e.Details["field"] != "range" {
			t.Errorf("ParseRange(%q) = %v, want CodeInvalidInput naming range", in, err)
		}
	}
}

func TestRangeStringRoundTrips(t *testing.T) {
	for _, in := range []string{"A1:C10", "B2:D", "A1:C", "B2:5", "ZZZ1048576:ZZZ1048576"} {
		r, err := ParseRange(in)
		if err != nil {
			t.Fatal(err)
		}
		if r.String() != in {
			t.Errorf("ParseRange(%q).String() = %q", in, r.String())
		}
	}
	if ColumnName(1) != "A" || ColumnName(26) != "Z" || ColumnName(27) != "AA" || ColumnName(703) != "AAA" {
		t.Error("ColumnName")
	}
}

func TestParseWhere(t *testing.T) {
	for in, want := range map[string]string{
		"":                                "",
		"status = done":                   "status|=|done",
		"amount>=100 AND status!=open":    "amount|>=|100;status|!=|open",
		`"Full name" contains 'o''brien'`: "Full name|contains|o'brien",
		"a == 'x y' and b <> \"\"":        "a|=|x y;b|!=|",
		"name StartsWith Al and city endswith 'on'": "name|startswith|Al;city|endswith|on",
		"x = =": "x|=|=",
	} {
		conds, err := ParseWhere(in)
		if err != nil {
			t.Errorf("ParseWhere(%q): %v", in, err)
			continue
		}
		var got []string
		for _, c := range conds {
			got = append(got, c.Column+"|"+c.Op+"|"+c.Value)
		}
		if strings.Join(got, ";") != want {
			t.Errorf("ParseWhere(%q) = %q, want %q", in, strings.Join(got, ";"), want)
		}
	}
}

func TestParseWhereRefuses(t *testing.T) {
	for _, in := range []string{"status", "status =", "status is done", "a = 1 b = 2", "a = 1 and", "a = 'open", "a 'contains' b", "a = 1 'and' b = 2"} {
		_, err := ParseWhere(in)
		if e := contracts.AsError(err); err == nil || e.Code != contracts.CodeInvalidInput || e.Details["field"] != "where" {
			t.Errorf("ParseWhere(%q) = %v, want CodeInvalidInput naming where", in, err)
		}
	}
}

func TestConditionMatch(t *testing.T) {
	for _, tc := range []struct {
		cond Condition
		cell string
		want bool
	}{
		{Condition{Op: "=", Value: "10"}, "10.0", true},
		{Condition{Op: ">", Value: "9"}, "10", true}, // numbers, not text ("10" < "9")
		{Condition{Op: ">", Value: "b"}, "a", false},
		{Condition{Op: "<=", Value: "apple"}, "apple", true},
		{Condition{Op: "!=", Value: "x"}, "X", true},
		{Condition{Op: "=", Value: "NaN"}, "5", false},
		{Condition{Op: "contains", Value: "LIC"}, "Alice", true},
		{Condition{Op: "startswith", Value: "al"}, "Alice", true},
		{Condition{Op: "endswith", Value: "ICE"}, "Alice", true},
		{Condition{Op: ">=", Value: "-1.5"}, " -1.5 ", true},
	} {
		if got := tc.cond.Match(tc.cell); got != tc.want {
			t.Errorf("%+v.Match(%q) = %v", tc.cond, tc.cell, got)
		}
	}
}

func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"A1", "A1:C10", "A:C", "2:5", "Sheet1!$B$2:D", "ZZZ1048576", "A0", "::", "aa12:b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRange(s)
		if err != nil {
			if contracts.CodeOf(err) != contracts.CodeInvalidInput {
				t.Fatalf("uncoded error %v", err)
			}
			return
		}
		if r.Col1 < 1 || r.Row1 < 1 || r.Col1 > MaxCol || r.Row1 > MaxRow || r.Col2 > MaxCol || r.Row2 > MaxRow ||
			(r.Col2 != 0 && r.Col2 < r.Col1) || (r.Row2 != 0 && r.Row2 < r.Row1) {
			t.Fatalf("ParseRange(%q) = %+v out of bounds", s, r)
		}
		back, err := ParseRange(r.String())
		if err != nil || back != r {
			t.Fatalf("ParseRange(%q) = %+v; its String %q parses to %+v, %v", s, r, r.String(), back, err)
		}
		// Cutting any sheet with it must not panic and stays inside the range.
		cells, _ := Cut([][]string{{"a", "b"}, {"c"}, {}, {"d", "e", "f"}}, r)
		for _, row := range cells {
			if r.Col2 != 0 && len(row) > r.Col2-r.Col1+1 {
				t.Fatalf("row wider than the range: %v", row)
			}
		}
	})
}

func FuzzParseWhere(f *testing.F) {
	for _, s := range []string{"status = done", "a>=1 and b<>'x'", `"Full name" contains 'o''brien'`, "a = 'open", "and", "x = = and y != !="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		conds, err := ParseWhere(s)
		if err != nil {
			if contracts.CodeOf(err) != contracts.CodeInvalidInput {
				t.Fatalf("uncoded error %v", err)
			}
			return
		}
		// Written back with every operand quoted, the clause parses to the same conditions.
		var parts []string
		for _, c := range conds {
			parts = append(parts, quote(c.Column)+" "+c.Op+" "+quote(c.Value))
			c.Match("1")
		}
		again, err := ParseWhere(strings.Join(parts, " and "))
		if err != nil || len(again) != len(conds) {
			t.Fatalf("re-parse of %q: %v, %v", parts, again, err)
		}
		for i := range conds {
			if again[i] != conds[i] {
				t.Fatalf("condition %d: %+v became %+v", i, conds[i], again[i])
			}
		}
	})
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
