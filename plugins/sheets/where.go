package sheets

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/internal/toolerr"
)

// Condition is one "column op value" test of a where clause.
type Condition struct {
	Column string
	Op     string // = != < <= > >= contains startswith endswith
	Value  string
}

var ops = map[string]string{
	"=": "=", "==": "=", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">=",
	"contains": "contains", "startswith": "startswith", "endswith": "endswith",
}

// MaxConditions bounds a where clause: each condition is tested on every
// row, and a clause of a million was within a call's size (99 over 2M rows
// ran past the 10 s timeout).
const MaxConditions = 20

// ParseWhere reads conditions joined by "and" (case-insensitive):
//
//	status = done and amount >= 100 and "Full name" contains 'o''brien'
//
// A column or value is a bare word or quoted with '…' or "…" (a doubled
// quote inside is one quote). Operators: = (==), != (<>), <, <=, >, >=,
// contains, startswith, endswith. An empty clause has no conditions; one
// of more than MaxConditions is refused.
// Errors are CodeInvalidInput naming field "where".
func ParseWhere(s string) ([]Condition, error) {
	toks, err := tokenize(s)
	if err != nil {
		return nil, whereError(s, "%v", err)
	}
	var conds []Condition
	for i := 0; i < len(toks); {
		if len(toks)-i < 3 {
			return nil, whereError(s, "condition %d is incomplete: want column op value", len(conds)+1)
		}
		col, op, val := toks[i], toks[i+1], toks[i+2]
		canon, ok := ops[strings.ToLower(op.text)]
		if !ok || op.quoted {
			return nil, whereError(s, "%q is not an operator (want = != < <= > >= contains startswith endswith)", op.text)
		}
		if len(conds) == MaxConditions {
			return nil, whereError(s, "more than %d conditions", MaxConditions)
		}
		conds = append(conds, Condition{Column: col.text, Op: canon, Value: val.text})
		i += 3
		if i < len(toks) {
			if toks[i].quoted || !strings.EqualFold(toks[i].text, "and") {
				return nil, whereError(s, "want \"and\" after condition %d, got %q", len(conds), toks[i].text)
			}
			if i++; i == len(toks) {
				return nil, whereError(s, "nothing after the last \"and\"")
			}
		}
	}
	return conds, nil
}

func whereError(s, format string, args ...any) error {
	return contracts.Errorf(contracts.CodeInvalidInput, "where %q: "+format, append([]any{s}, args...)...).
		With("field", "where").With("where", toolerr.Shown(s))
}

type token struct {
	text   string
	quoted bool
}

// tokenize splits on spaces, keeps quoted strings whole, and splits an
// operator glued to its operands ("amount>=100").
func tokenize(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(s) {
					return nil, fmt.Errorf("unterminated quote at %d", i)
				}
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c {
						b.WriteByte(c)
						j += 2
						continue
					}
					break
				}
				b.WriteByte(s[j])
				j++
			}
			toks = append(toks, token{text: b.String(), quoted: true})
			i = j + 1
		case strings.IndexByte("=!<>", c) >= 0:
			j := i + 1
			if j < len(s) && strings.IndexByte("=>", s[j]) >= 0 {
				j++
			}
			toks = append(toks, token{text: s[i:j]})
			i = j
		default:
			j := i
			for j < len(s) && strings.IndexByte(" \t\n\r'\"=!<>", s[j]) < 0 {
				j++
			}
			toks = append(toks, token{text: s[i:j]})
			i = j
		}
	}
	return toks, nil
}

// textOps and orderOps are the operators on text that ignore case, and
// those that order a cell against the value (given the comparison's sign).
var (
	textOps  = map[string]func(s, sub string) bool{"contains": strings.Contains, "startswith": strings.HasPrefix, "endswith": strings.HasSuffix}
	orderOps = map[string]func(int) bool{
		"=": func(n int) bool { return n == 0 }, "!=": func(n int) bool { return n != 0 },
		"<": func(n int) bool { return n < 0 }, "<=": func(n int) bool { return n <= 0 },
		">": func(n int) bool { return n > 0 }, ">=": func(n int) bool { return n >= 0 },
	}
)

// Match reports whether cell satisfies the condition. Two numbers compare
// as numbers, anything else as text; contains/startswith/endswith ignore
// case.
func (c Condition) Match(cell string) bool { return c.Matcher()(cell) }

// Matcher is Match with the value's work done once (lower-cased, parsed as
// a number), for matching many cells: a query did it for every row, which
// for a value of 1 MB and 100,000 rows was 100 GB of lower-casing.
func (c Condition) Matcher() func(cell string) bool {
	if test, ok := textOps[c.Op]; ok {
		value := strings.ToLower(c.Value)
		return func(cell string) bool { return test(strings.ToLower(cell), value) }
	}
	y, numeric := number(c.Value)
	want := orderOps[c.Op]
	return func(cell string) bool {
		if numeric {
			if x, ok := number(cell); ok {
				return want(cmp.Compare(x, y))
			}
		}
		return want(strings.Compare(cell, c.Value))
	}
}

// number parses a finite number; NaN and infinities stay text.
func number(s string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
}
