package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/internal/doctest"
	"github.com/ordo-run/ordo/internal/testmcp"
)

// docJSON is one JSON example: a value (or several) the docs show, or the
// result shown after a tool call ("→ …" in a block, or the block right
// after a call's).
type docJSON struct {
	block  doctest.Block
	text   string
	result bool
}

// jsonExamples splits the JSON blocks of one file into examples, in order.
func jsonExamples(blocks []doctest.Block) []docJSON {
	var out []docJSON
	for _, b := range doctest.Of(blocks, "json") {
		if b.Skipped() {
			continue
		}
		first := len(out)
		var cur []string
		flush := func(result bool) {
			if text := strings.TrimSpace(strings.Join(cur, "\n")); text != "" {
				out = append(out, docJSON{block: b, text: text, result: result})
			}
			cur = nil
		}
		result := false
		for _, line := range strings.Split(b.Text, "\n") {
			if rest, ok := strings.CutPrefix(line, "→"); ok {
				flush(result)
				result, line = true, rest
			} else if result && strings.HasPrefix(line, "{") {
				flush(true)
				result = false
			}
			cur = append(cur, line)
		}
		flush(result)
		// A block that only shows a value, right after a call's block, is
		// that call's result.
		if len(out) == first+1 && first > 0 && toolCall(out[first-1].text) != nil && toolCall(out[first].text) == nil {
			out[first].result = true
		}
	}
	return out
}

type docCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// toolCall decodes an MCP tools/call example, {"name", "arguments"}.
func toolCall(text string) *docCall {
	var c docCall
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if dec.Decode(&c) != nil || c.Name == "" || c.Arguments == nil {
		return nil
	}
	return &c
}

// elidedRun is a run id shortened in the docs ("run_5f0c…"): a test
// call stands in the run its earlier call created.
var elidedRun = regexp.MustCompile(`"run_[0-9a-f]*…"`)

// shownPair is a "key":"value" a result example shows in full (a JSON
// string with no "…" in it).
var shownPair = regexp.MustCompile(`"([a-z_]+)":("(?:[^"\\…]|\\.)*")`)

// volatile keys change from run to run; the docs show an example value.
var volatile = []string{"at", "time", "run_id", "id", "page_id", "page_url", "message_ts", "answer", "updated_at", "created_at"}

// TestDocToolCalls runs every MCP tool call shown in README.md and docs/
// (a JSON value {"name", "arguments"}) against a real `ordo serve` over
// stdio, one server per file, in the order the file shows them, so that an
// elided run id ("run_5f0c…") stands for the run of the call before. Each
// "key":"value" the result after a call shows in full must be in the real
// result. Every other JSON example must parse.
func TestDocToolCalls(t *testing.T) {
	blocks, err := doctest.Blocks(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	byFile := map[string][]doctest.Block{}
	var files []string
	for _, b := range blocks {
		if _, ok := byFile[b.File]; !ok {
			files = append(files, b.File)
		}
		byFile[b.File] = append(byFile[b.File], b)
	}
	calls := 0
	for _, file := range files {
		examples := jsonExamples(byFile[file])
		var server func(name string, args map[string]any) (string, bool)
		lastRun := ""
		for i, ex := range examples {
			call := toolCall(ex.text)
			switch {
			case ex.result:
				continue
			case call == nil && strings.Contains(ex.text, "…"):
				continue // an elided shape, not a value
			case call == nil:
				if err := parseAll(ex.text); err != nil {
					t.Errorf("%s: not JSON: %v\n%s", ex.block, err, ex.text)
				}
				continue
			}
			calls++
			if server == nil {
				server = docServer(t)
			}
			raw := string(call.Arguments)
			if lastRun != "" {
				raw = elidedRun.ReplaceAllString(raw, `"`+lastRun+`"`)
			}
			var args map[string]any
			if err := json.Unmarshal([]byte(raw), &args); err != nil {
				t.Errorf("%s: %s arguments: %v", ex.block, call.Name, err)
				continue
			}
			got, isError := server(call.Name, args)
			var res struct {
				RunID string `json:"run_id"`
			}
			if json.Unmarshal([]byte(got), &res) == nil && res.RunID != "" {
				lastRun = res.RunID
			}
			if i+1 >= len(examples) || !examples[i+1].result {
				if isError {
					t.Errorf("%s: %s failed: %s", ex.block, call.Name, got)
				}
				continue
			}
			shown := examples[i+1]
			var actual any
			if err := json.Unmarshal([]byte(got), &actual); err != nil {
				t.Errorf("%s: %s: result is not JSON: %s", shown.block, call.Name, got)
				continue
			}
			for _, m := range shownPair.FindAllStringSubmatch(shown.text, -1) {
				var value string
				if slices.Contains(volatile, m[1]) || json.Unmarshal([]byte(m[2]), &value) != nil {
					continue
				}
				if !hasPair(actual, m[1], value) {
					t.Errorf("%s: %s shows %q: %q; the real result has not:\n%s", shown.block, call.Name, m[1], value, got)
				}
			}
		}
	}
	if calls < 5 {
		t.Errorf("ran %d tool calls from the docs; the example parser lost some", calls)
	}
}

// docServer starts one `ordo serve` on the default configuration and
// returns a function calling its tools, giving the result's JSON text.
func docServer(t *testing.T) func(name string, args map[string]any) (string, bool) {
	c := serveStdio(t, newEnv(t), "")
	return func(name string, args map[string]any) (string, bool) {
		res, _, err := callAdmin(t, c, name, args)
		if err != nil {
			return err.Error(), true
		}
		if res.StructuredContent != nil {
			body, _ := json.Marshal(res.StructuredContent)
			return string(body), res.IsError
		}
		return testmcp.Text(res), res.IsError
	}
}

// parseAll decodes every JSON value in text.
func parseAll(text string) error {
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	for {
		var v any
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// hasPair reports whether key holds the string value anywhere in v.
func hasPair(v any, key, value string) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == key && s == value {
				return true
			}
			if hasPair(x, key, value) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if hasPair(x, key, value) {
				return true
			}
		}
	}
	return false
}
