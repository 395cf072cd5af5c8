package tokenize

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitIdentifiers(t *testing.T) {
	cases := map[string][]string{
		"getWeatherForecast":   {"get", "Weather", "Forecast"},
		"get_weather.forecast": {"get", "weather", "forecast"},
		"HTTPServer2go":        {"HTTP", "Server", "2", "go"},
		"  ":                   nil,
	}
	for in, want := range cases {
		if got := Split(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Split(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWordsStemsAndDropsStopwords(t *testing.T) {
	got := Words("Please get the weather forecasts for the running events")
	want := []string{"weather", "forecast", "run", "event"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Words = %q, want %q", got, want)
	}
}

func TestStemFoldsInflections(t *testing.T) {
	groups := [][]string{
		{"forecast", "forecasts", "forecasting", "forecasted"},
		{"company", "companies"},
		{"book", "books", "booking"},
		{"recommend", "recommended", "recommendations"},
		{"status", "statuses"},
	}
	for _, g := range groups {
		for _, w := range g[1:] {
			if Stem(w) != Stem(g[0]) {
				t.Errorf("Stem(%q) = %q, Stem(%q) = %q; want equal", w, Stem(w), g[0], Stem(g[0]))
			}
		}
	}
	if Stem("class") != "class" || Stem("HTTP2") != "HTTP2" || Stem("gps") != "gps" {
		t.Errorf("Stem broke a word it should keep: class -> %q, HTTP2 -> %q, gps -> %q", Stem("class"), Stem("HTTP2"), Stem("gps"))
	}
}

// TestPorter checks the stemmer against examples from Porter's paper.
func TestPorter(t *testing.T) {
	for in, want := range map[string]string{
		"caresses": "caress", "ponies": "poni", "cats": "cat", "feed": "feed", "agreed": "agre",
		"plastered": "plaster", "motoring": "motor", "sing": "sing", "conflated": "conflat",
		"troubled": "troubl", "sized": "size", "hopping": "hop", "falling": "fall", "filing": "file",
		"happy": "happi", "relational": "relat", "conditional": "condit", "rational": "ration",
		"digitizer": "digit", "triplicate": "triplic", "formative": "form", "formalize": "formal",
		"electricity": "electr", "electrical": "electr", "hopeful": "hope", "goodness": "good",
		"revival": "reviv", "allowance": "allow", "inference": "infer", "airliner": "airlin",
		"adjustable": "adjust", "adoption": "adopt", "generalization": "gener", "controll": "control",
		"roll": "roll", "oscillators": "oscil",
	} {
		if got := porter(in); got != want {
			t.Errorf("porter(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClauses(t *testing.T) {
	got := Clauses("Book a flight to Paris, then reserve a hotel near the Louvre and send the itinerary to Bob.", 2, true)
	want := []string{"Book a flight to Paris", "reserve a hotel near the Louvre", "send the itinerary to Bob"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Clauses = %q, want %q", got, want)
	}
	// A short argument tail joins its clause instead of becoming a task.
	got = Clauses("Convert 10 dollars and euros", 2, true)
	if len(got) != 1 {
		t.Fatalf("Clauses kept a one-word tail as a task: %q", got)
	}
	if got := Clauses("", 2, false); len(got) != 0 {
		t.Fatalf("Clauses(\"\") = %q", got)
	}
}

func FuzzWords(f *testing.F) {
	for _, s := range []string{"getWeatherForecast", "Book a flight, then a hotel.", "ÄÖÜ straße 12ab", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, w := range Words(s) {
			if w == "" || strings.ToLower(w) != w {
				t.Fatalf("Words(%q) produced %q", s, w)
			}
		}
		for _, c := range Clauses(s, 2, len(s)%2 == 0) {
			if strings.TrimSpace(c) == "" {
				t.Fatalf("Clauses(%q) produced an empty clause", s)
			}
			if utf8.ValidString(s) && !utf8.ValidString(c) {
				t.Fatalf("Clauses(%q) produced invalid UTF-8 %q", s, c)
			}
		}
	})
}
