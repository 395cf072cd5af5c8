package tokenize

import (
	"regexp"
	"strings"
)

// clauseBreak matches the places where a compound request usually moves on
// to its next task: sentence ends, semicolons, commas, and connectives such
// as "and", "then", "after that", "also", "finally".
var clauseBreak = regexp.MustCompile(`(?i)[.;!?]+(\s|$)|,|\b(and then|after that|afterwards|and also|as well as|additionally|finally|next|then|also|and|plus)\b`)

// Clauses splits a request into the parts that may each need a different
// tool. Parts with fewer than minWords content words are merged into the
// previous part (a trailing "and the date" is an argument, not a task).
// A request with one task yields one clause.
func Clauses(s string, minWords int) []string {
	var out []string
	for _, part := range clauseBreak.Split(s, -1) {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if len(Words(part)) < minWords && len(out) > 0 {
			out[len(out)-1] += " " + part
			continue
		}
		out = append(out, part)
	}
	if len(out) > 1 && len(Words(out[0])) < minWords {
		out[1] = out[0] + " " + out[1]
		out = out[1:]
	}
	return out
}
