package tokenize

import (
	"strings"
	"unicode"
)

// Words returns the stemmed, lower-case content words of s, in order.
// Identifiers are split: "getWeatherForecast", "get_weather_forecast" and
// "weather.get" all yield their parts.
func Words(s string) []string {
	var out []string
	for _, raw := range Split(s) {
		w := strings.ToLower(raw)
		if stopwords[w] {
			continue
		}
		out = append(out, Stem(w))
	}
	return out
}

// Split breaks s into raw word pieces: runs of letters or digits, with
// camelCase and letter/digit boundaries also splitting ("HTTPServer2" ->
// "HTTP", "Server", "2"). Case is kept.
func Split(s string) []string {
	var out []string
	rs := []rune(s)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, string(rs[start:end]))
		}
		start = -1
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		if boundary(rs, i) {
			flush(i)
			start = i
		}
	}
	flush(len(rs))
	return out
}

// boundary reports whether a new word starts at rs[i] inside a run of
// letters and digits.
func boundary(rs []rune, i int) bool {
	prev, cur := rs[i-1], rs[i]
	switch {
	case unicode.IsDigit(prev) != unicode.IsDigit(cur):
		return true
	case unicode.IsLower(prev) && unicode.IsUpper(cur):
		return true
	case unicode.IsUpper(prev) && unicode.IsUpper(cur) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
		// "HTTPServer": the S starts "Server".
		return true
	}
	return false
}

// Stem folds common English inflections so "forecasts", "forecasting" and
// "forecasted" meet. It is deliberately light (plural, -ing, -ed, -ly, -ies,
// -ment, -ation): aggressive stemming merges unrelated tool words.
func Stem(w string) string {
	if len(w) <= 3 || !isAlpha(w) {
		return w
	}
	for _, r := range rules {
		if strings.HasSuffix(w, r.suffix) && len(w)-len(r.suffix) >= r.minStem {
			return undouble(w[:len(w)-len(r.suffix)] + r.repl)
		}
	}
	return w
}

type rule struct {
	suffix, repl string
	minStem      int
}

// rules are tried in order; the first whose suffix matches wins.
var rules = []rule{
	{"ational", "ate", 3},
	{"ization", "ize", 3},
	{"isation", "ize", 3},
	{"ation", "ate", 3},
	{"ments", "", 4},
	{"ment", "", 4},
	{"iness", "y", 3},
	{"ness", "", 4},
	{"ings", "", 3},
	{"ing", "", 3},
	{"ies", "y", 2},
	{"ied", "y", 2},
	{"sses", "ss", 2},
	{"ss", "ss", 2},
	{"us", "us", 2},
	{"is", "is", 2},
	{"ers", "er", 3},
	{"ed", "", 3},
	{"es", "e", 3},
	{"s", "", 3},
	{"ly", "", 4},
}

// undouble drops a doubled final consonant left by -ing/-ed ("running" ->
// "runn" -> "run"), keeping ll, ss and zz which are usually part of the root.
func undouble(w string) string {
	n := len(w)
	if n >= 4 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

func isAlpha(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// stopwords are English function words and request boilerplate that carry
// no tool meaning.
var stopwords = set(`a an the and or but if then else of to in on at by for with from into onto
about as is are was were be been being am do does did doing have has had having it its it's
this that these those there here i me my mine we us our you your yours he him his she her they
them their what which who whom whose when where why how all any both each few more most other
some such no nor not only own same so than too very can could will would shall should may might
must just also please want need like get let make use using give show tell help find some
s t d ll m re ve e g eg etc via per`)

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
