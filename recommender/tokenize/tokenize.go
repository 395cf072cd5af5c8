package tokenize

import (
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// Words returns the stemmed, lower-case content words of s, in order.
// Identifiers are split: "getWeatherForecast", "get_weather_forecast" and
// "weather.get" all yield their parts. Function words and request verbs
// ("please", "find", "make") are dropped.
func Words(s string) []string { return words(s, false) }

// NameWords is Words for tool names and short requests: when dropping the
// request verbs would leave nothing (a tool named `help` or `find`, a
// request "help"), they are kept, so no name vanishes from the index.
// Otherwise they go, as in Words: keeping them in every name cost
// Seal-Tools multi-tool Full@5 0.009, and in requests too MetaTool R@1
// 0.007 (docs/recommender.md).
func NameWords(s string) []string {
	if w := Words(s); len(w) > 0 {
		return w
	}
	return words(s, true)
}

func words(s string, keepRequest bool) []string {
	var out []string
	for _, raw := range Split(s) {
		w := strings.ToLower(raw)
		if functionWords[w] || (!keepRequest && requestWords[w]) {
			continue
		}
		out = append(out, Stem(w))
	}
	return out
}

// Content is s without its function words and request verbs, its other
// words unstemmed and joined by spaces: what a meaning model should read of
// a request. "Can you please help me find a recipe" has more pieces of
// boilerplate than of task, and a sum of piece vectors follows the
// majority. A text of nothing else is returned as it is.
func Content(s string) string {
	var out []string
	for _, raw := range Split(s) {
		if w := strings.ToLower(raw); !functionWords[w] && !requestWords[w] {
			out = append(out, raw)
		}
	}
	if len(out) == 0 {
		return s
	}
	return strings.Join(out, " ")
}

// Split breaks s into raw word pieces: runs of letters or digits, with
// camelCase, letter/digit and script boundaries also splitting
// ("HTTPServer2" -> "HTTP", "Server", "2"; "Slack에" -> "Slack", "에").
// Case is kept.
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
	case unicode.IsLetter(prev) && unicode.IsLetter(cur) && (prev < utf8.RuneSelf) != (cur < utf8.RuneSelf):
		// An ASCII word glued to another script, as Korean particles glue to
		// a product name ("Slack에"): the name is a word of its own.
		return true
	}
	return false
}

// Stem folds inflections and derivations with the Snowball English
// (Porter2) stemmer, so "recommendations", "recommended" and "recommend"
// meet, as do "forecasts" and "forecasting". Words of three letters or
// fewer, and words with digits or non-ASCII letters, are kept as they are
// (identifiers, codes, other scripts).
// Porter2 replaced Porter (1980), whose over-stemming merged unrelated words
// ("news" -> "new", "general"/"generate" -> "gener"); see
// docs/recommender.md for the measurement.
func Stem(w string) string {
	if len(w) <= 3 || !isAlpha(w) {
		return w
	}
	if s, ok := stems.Load(w); ok {
		return s.(string)
	}
	s := english.Stem(w, true)
	if stemCount.Add(1) <= maxStems {
		stems.Store(w, s)
	}
	return s
}

// stems caches Stem: a catalog repeats a small vocabulary millions of times
// (re-indexing 50k tools at start-up), and Snowball works rune by rune. The
// cache is bounded so arbitrary request words cannot grow it for ever.
var (
	stems     sync.Map
	stemCount atomic.Int64
)

const maxStems = 200_000

func isAlpha(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// functionWords are English function words that carry no tool meaning:
// NLTK's English stop list (contractions as the pieces Split yields:
// "don't" -> "don", "t") and a few abbreviations. The NLTK list was added
// whole, not picked word by word: MetaTool R@1 +0.004 on the dev set,
// Seal-Tools unchanged or better.
var functionWords = set(`
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her
hers herself it its itself they them their theirs themselves what which who whom this that these
those am is are was were be been being have has had having do does did doing a an the and but if
or because as until while of at by for with about against between into through during before
after above below to from up down in out on off over under again further then once here there
when where why how all any both each few more most other some such no nor not only own same so
than too very s t can will just don should now d ll m o re ve y ain aren couldn didn doesn hadn
hasn haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn
mine us whose else onto it's could would shall may might must also e g eg etc via per`)

// requestWords are the verbs of request boilerplate ("please help me find
// ..."): dropped from descriptions and from Words, kept by NameWords.
var requestWords = set(`please want need like get let make use using give show tell help find`)

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
