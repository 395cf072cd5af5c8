package recommender

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/ordo-run/ordo/contracts"
)

// fields is a tool's indexed text, split by where it came from so the
// lexical index can weight the name above parameter prose.
type fields struct {
	Name, Description, Params string
}

// toolFields extracts the indexed text of a contract: the tool and service
// names (identifier splitting happens in tokenize), the description, and
// each top-level parameter's name and description.
func toolFields(c contracts.Contract) fields {
	name := c.Tool
	if c.Service != "" && !strings.HasPrefix(c.Tool, c.Service+".") {
		name = c.Service + " " + c.Tool
	}
	return fields{Name: name, Description: head(c.Description), Params: head(paramText(c.InputSchema))}
}

// MaxFieldBytes bounds the indexed text of a description and of the
// parameters' prose: a third party writes them, and a megabyte of distinct
// words took 0.6 s to index and 2.3 MB of index file per tool. Honest
// descriptions say what a tool does in far less.
const MaxFieldBytes = 4096

// head is s cut to at most MaxFieldBytes, at a rune boundary.
func head(s string) string {
	if len(s) <= MaxFieldBytes {
		return s
	}
	i := MaxFieldBytes
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// paramText flattens the input schema's top-level properties into
// "name: description" lines, sorted by name so the text (and its hash) is
// stable. An unreadable schema contributes nothing: the contract's own
// validation is the host's job.
func paramText(schema json.RawMessage) string {
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if len(schema) == 0 || json.Unmarshal(schema, &s) != nil {
		return ""
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n)
		if d := s.Properties[n].Description; d != "" {
			b.WriteString(": ")
			b.WriteString(d)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// text is the single string that is embedded and hashed.
func (f fields) text() string {
	return f.Name + "\n" + f.Description + "\n" + f.Params
}

// semanticText is what the semantic embedder reads: the name and the
// description (parameter prose mostly names arguments, not the task).
func (f fields) semanticText() string {
	return f.Name + ". " + f.Description
}

// hash identifies the embedded text; equal hashes mean the stored vector
// is still right. It answers another question than the contract's own
// hash (contracts.Contract.Hash, whether the tool changed at all): a
// changed risk level changes the contract but not the text, so the tool
// keeps its vectors.
func (f fields) hash() string {
	sum := sha256.Sum256([]byte(f.text()))
	return hex.EncodeToString(sum[:16])
}

// serviceOf is the contract's service, or the "service." prefix of its name.
func serviceOf(c contracts.Contract) string {
	if c.Service != "" {
		return c.Service
	}
	if i := strings.IndexByte(c.Tool, '.'); i > 0 {
		return c.Tool[:i]
	}
	return ""
}
