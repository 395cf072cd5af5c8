package contracts

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// readContract loads a test contract from testdata/contracts.
func readContract(tb testing.TB, name string) Contract {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "contracts", name+".json"))
	if err != nil {
		tb.Fatal(err)
	}
	var c Contract
	if err := json.Unmarshal(data, &c); err != nil {
		tb.Fatal(err)
	}
	return c
}

// testCatalog is notion.create_page, slack.post_message and sheets.get_range.
func testCatalog(tb testing.TB) ToolMap {
	tb.Helper()
	var tools []*Tool
	for _, name := range []string{"notion.create_page", "slack.post_message", "sheets.get_range"} {
		tool, err := NewTool(readContract(tb, name))
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		tools = append(tools, tool)
	}
	return NewToolMap(tools...)
}

func readPlan(tb testing.TB, name string) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "plans", name))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// wantCode fails unless err is a coded error with code, and returns it:
// internal/testerr.Code, which contracts' own tests cannot import (it
// imports contracts).
func wantCode(tb testing.TB, err error, code Code) *Error {
	tb.Helper()
	if err == nil {
		tb.Fatalf("got no error, want code %d", code)
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != code {
		tb.Fatalf("got %v, want code %d", err, code)
	}
	return e
}

// ToolMap is a fixed catalog keyed by tool name.
type ToolMap map[string]*Tool

// Lookup implements Catalog.
func (m ToolMap) Lookup(name string) (*Tool, bool) {
	t, ok := m[name]
	return t, ok
}

// NewToolMap indexes tools by name; a later tool of the same name wins.
func NewToolMap(tools ...*Tool) ToolMap {
	m := make(ToolMap, len(tools))
	for _, t := range tools {
		m[t.Name()] = t
	}
	return m
}
