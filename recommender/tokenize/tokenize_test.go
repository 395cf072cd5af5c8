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

func TestContentKeepsTaskWordsUnstemmed(t *testing.T) {
	cases := map[string]string{
		"Can you please help me find the running events?": "running events",
		"I'd like getWeatherForecast for Paris":           "Weather Forecast Paris",
		"help me please":                                  "help me please", // nothing else: kept whole
	}
	for in, want := range cases {
		if got := Content(in); got != want {
			t.Errorf("Content(%q) = %q, want %q", in, got, want)
		}
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

// TestStemDoesNotOverStem checks the fragile spots Porter (1980) had:
// unrelated words merged, and a name made of request verbs vanishing.
func TestStemDoesNotOverStem(t *testing.T) {
	for _, pair := range [][2]string{{"news", "new"}, {"general", "generate"}} {
		if Stem(pair[0]) == Stem(pair[1]) {
			t.Errorf("Stem merges %q and %q into %q", pair[0], pair[1], Stem(pair[0]))
		}
	}
	if got := NameWords("help"); !reflect.DeepEqual(got, []string{"help"}) {
		t.Errorf("NameWords(help) = %q, want the name kept", got)
	}
	if got := NameWords("tools.findFlights"); !reflect.DeepEqual(got, []string{"tool", "flight"}) {
		t.Errorf("NameWords(tools.findFlights) = %q", got)
	}
	if got := Words("Find the cheapest flights"); !reflect.DeepEqual(got, []string{"cheapest", "flight"}) {
		t.Errorf("Words of a description = %q, want request verbs dropped", got)
	}
	if got := Split("Slack에 메시지"); !reflect.DeepEqual(got, []string{"Slack", "에", "메시지"}) {
		t.Errorf("Split = %q, want the ASCII name cut from its Korean particle", got)
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
	// Bare "next" and "once" are arguments, not connectives.
	for _, s := range []string{"Show the next meeting on my calendar", "Water the plants once a week in the garden"} {
		for _, weak := range []bool{false, true} {
			if got := Clauses(s, 2, weak); len(got) != 1 {
				t.Errorf("Clauses(%q, weak %v) = %q, want one clause", s, weak, got)
			}
		}
	}
	if got := Clauses("Upload the report; next, email the summary to Bob", 2, false); len(got) != 2 {
		t.Errorf("Clauses did not split at \"next,\": %q", got)
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
		if c := Content(s); len(Split(s)) > 0 && len(Split(c)) == 0 {
			t.Fatalf("Content(%q) = %q lost every word", s, c)
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
