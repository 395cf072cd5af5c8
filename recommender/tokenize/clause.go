package tokenize

import (
	"regexp"
	"strings"
)

// strongBreak matches where a compound request moves on to its next task:
// sentence ends, semicolons, and discourse connectives ("then", "after
// that", "additionally", "finally", ...). "next" counts only as "next,":
// bare, it is mostly an argument ("the next meeting"); "once" is not a
// break at all ("once a week", "once the file is uploaded, ...").
var strongBreak = regexp.MustCompile(`(?i)[.;!?]+(\s|$)|\bnext,|\b(and then|after that|afterwards|and also|additionally|in addition|furthermore|moreover|finally|lastly|then|also)\b`)

// weakBreak also splits at commas (so "next," too) and a bare "and", which separate tasks
// in short requests but often only list arguments in long ones.
var weakBreak = regexp.MustCompile(`(?i)[.;!?]+(\s|$)|,|\b(and then|after that|afterwards|and also|as well as|additionally|in addition|furthermore|moreover|finally|lastly|then|also|and|plus)\b`)

// Clauses splits a request into the parts that may each need a different
// tool, at strong breaks only or (weak) also at commas and "and". Parts with
// fewer than minWords content words are merged into the previous part (a
// trailing "and the date" is an argument, not a task). A request with one
// task yields one clause.
func Clauses(s string, minWords int, weak bool) []string {
	re := strongBreak
	if weak {
		re = weakBreak
	}
	var out []string
	for _, part := range re.Split(s, -1) {
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
