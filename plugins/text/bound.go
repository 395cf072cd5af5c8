package text

import (
	"encoding/json"
	"strings"

	"github.com/theory/jsonpath"
	"github.com/theory/jsonpath/spec"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/internal/toolerr"
)

// maxSelected bounds the nodes a path may select, counted before selecting
// as the document's nodes times each segment's selectors. A second
// descendant segment (or one in a filter, run for every node) would multiply
// by up to the depth each: `$..*..*..*..*..*` on 126 bytes of nested arrays
// selected millions of nodes and held the plugin past its timeout.
const maxSelected = 1 << 22

// boundPath refuses (field path) a path that could select more than
// maxSelected nodes of doc.
func boundPath(p *jsonpath.Path, doc any) error {
	refuse := func(why string) error {
		return toolerr.Refuse("path", "path %s %s", p, why).With("limit", maxSelected)
	}
	selected, descendants := countNodes(doc), 0
	for _, seg := range p.Query().Segments() {
		if seg.IsDescendant() {
			descendants++
		}
		for _, sel := range seg.Selectors() {
			if _, ok := sel.(*spec.FilterSelector); ok && strings.Contains(sel.String(), "..") {
				return refuse("has a descendant segment (..) inside a filter")
			}
		}
		if selected *= max(1, len(seg.Selectors())); selected > maxSelected {
			return refuse("could select too many nodes")
		}
	}
	if descendants > 1 {
		return refuse("has more than one descendant segment (..)")
	}
	return nil
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

// tooBig reports whether vs, as JSON, would pass contracts.MaxMessageBytes
// (what the host accepts from a plugin), counting at most that many bytes
// (unescaped, so a lower bound): nodes nested in one another are each
// written in full, so $..* can be far larger than its document.
func tooBig(vs []any) bool {
	budget := contracts.MaxMessageBytes
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
				budget -= len(k) + 3
				size(e)
			}
		case string:
			budget -= len(v) + 2
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
