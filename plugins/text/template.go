package text

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/ordo-run/ordo/contracts"
)

// Template is a parsed {{key}} template: literal text with placeholders.
// A placeholder is a dotted path into the values, spaces around it ignored:
// {{ page.url }}, {{ rows.0.name }} (a number indexes an array). Every "{{"
// opens a placeholder; there is no logic and no escaping, so rendering is
// linear in the output and cannot loop.
type Template struct {
	parts []part
}

type part struct {
	literal string
	path    []string // nil for a literal
}

// ParseTemplate parses s. Errors are CodeInvalidInput naming field
// "template": an unclosed "{{", or an empty path or path segment.
func ParseTemplate(s string) (*Template, error) {
	t := &Template{}
	for rest := s; rest != ""; {
		open := strings.Index(rest, "{{")
		if open < 0 {
			t.parts = append(t.parts, part{literal: rest})
			break
		}
		if open > 0 {
			t.parts = append(t.parts, part{literal: rest[:open]})
		}
		end := strings.Index(rest[open+2:], "}}")
		if end < 0 {
			return nil, templateError(s, "\"{{\" at byte %d is never closed", len(s)-len(rest)+open)
		}
		expr := strings.TrimSpace(rest[open+2 : open+2+end])
		path := strings.Split(expr, ".")
		for _, seg := range path {
			if seg == "" || strings.ContainsAny(seg, "{} \t\n") {
				return nil, templateError(s, "placeholder {{%s}} is not a dotted path like page.url", expr)
			}
		}
		t.parts = append(t.parts, part{path: path})
		rest = rest[open+2+end+2:]
	}
	return t, nil
}

func templateError(s, format string, args ...any) error {
	return contracts.Errorf(contracts.CodeInvalidInput, "template: "+format, args...).With("field", "template")
}

// Render fills the placeholders from values: strings as they are, other
// values as compact JSON. It returns the paths that found nothing (the
// text is then incomplete and should not be used) and stops with
// exceeded=true once the text would pass limit bytes.
func (t *Template) Render(values map[string]any, limit int) (text string, missing []string, exceeded bool) {
	var b strings.Builder
	for _, p := range t.parts {
		s := p.literal
		if p.path != nil {
			v, ok := lookup(values, p.path)
			if !ok {
				missing = append(missing, strings.Join(p.path, "."))
				continue
			}
			s = render(v)
		}
		if b.Len()+len(s) > limit {
			return "", missing, true
		}
		b.WriteString(s)
	}
	return b.String(), missing, false
}

// lookup follows a dotted path through objects and arrays.
func lookup(v any, path []string) (any, bool) {
	for _, seg := range path {
		switch node := v.(type) {
		case map[string]any:
			next, ok := node[seg]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(node) {
				return nil, false
			}
			v = node[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// render writes a value into text: a string as is, anything else as JSON.
func render(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	data, err := json.Marshal(v)
	if err != nil { // JSON-decoded values always marshal
		return ""
	}
	return string(data)
}
