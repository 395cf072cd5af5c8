package text

import (
	"encoding/json"
	"strings"

	"github.com/theory/jsonpath"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/internal/jsonsize"
	"github.com/ordo-run/ordo/plugins/internal/toolerr"
)

// maxSelected bounds the nodes a path may select, counted before selecting
// as the document's nodes times the selectors of each bracket (a union
// [0,0] selects a node twice), filters and function arguments included. A
// second descendant segment (..) would multiply by up to the depth:
// `$..*..*..*..*..*` on 126 bytes of nested arrays selected millions of
// nodes and held the plugin past its timeout, so a path has at most one.
const maxSelected = 1 << 22

// boundPath refuses (field path) a path that could select more than
// maxSelected nodes of doc.
func boundPath(p *jsonpath.Path, doc any) error {
	descendants, product := shape(p.String())
	switch {
	case descendants > 1:
		return toolerr.Refuse("path", "path %s has more than one descendant segment (..)", p).With("limit", maxSelected)
	case countNodes(doc)*product > maxSelected:
		return toolerr.Refuse("path", "path %s could select more than %d nodes", p, maxSelected).With("limit", maxSelected)
	}
	return nil
}

// shape scans a path in its canonical form (names double-quoted with
// backslash escapes) for its descendant segments and the product of its
// brackets' selector counts (commas at the bracket's own level, plus one;
// those between a function's arguments do not count), saturating past
// maxSelected.
func shape(canon string) (descendants, product int) {
	product = 1
	var open []int // per open bracket its commas; -1 for a parenthesis
	for i := 0; i < len(canon); i++ {
		top := len(open) - 1
		switch c := canon[i]; {
		case c == '"':
			for i++; i < len(canon) && canon[i] != '"'; i++ {
				if canon[i] == '\\' {
					i++
				}
			}
		case c == '.' && strings.HasPrefix(canon[i:], ".."):
			descendants++
			i++
		case c == '[':
			open = append(open, 0)
		case c == '(':
			open = append(open, -1)
		case (c == ']' || c == ')') && top >= 0:
			if c == ']' {
				product = min(product*(open[top]+1), maxSelected+1)
			}
			open = open[:top]
		case c == ',' && top >= 0 && open[top] >= 0:
			open[top]++
		}
	}
	return descendants, product
}

// countNodes counts the values in v, v included.
func countNodes(v any) int {
	n := 1
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			n += countNodes(e)
		}
	case map[string]any:
		for _, e := range v {
			n += countNodes(e)
		}
	}
	return n
}

// tooBig reports whether vs, as JSON, would pass what the host accepts from
// a plugin (contracts.MaxMessageBytes, less room for the rest of the
// answer), counting at most that many bytes: nodes nested in one another
// are each written in full, so $..* can be far larger than its document.
func tooBig(vs []any) bool {
	budget := contracts.MaxMessageBytes - 64<<10
	var size func(v any)
	size = func(v any) {
		if budget < 0 {
			return
		}
		switch v := v.(type) {
		case []any:
			budget -= 1 + len(v)
			for _, e := range v {
				size(e)
			}
		case map[string]any:
			budget -= 1 + len(v)
			for k, e := range v {
				budget -= jsonsize.Len(k) + 1
				size(e)
			}
		case string:
			budget -= jsonsize.Len(v)
		case json.Number:
			budget -= len(v)
		default: // true, false, null
			budget -= 4
		}
	}
	for _, v := range vs {
		size(v)
	}
	return budget < 0
}
