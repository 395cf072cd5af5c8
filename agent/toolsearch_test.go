package agent

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/agent/llm"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/chat"
	"github.com/ordo-run/ordo/plugins/files"
	"github.com/ordo-run/ordo/plugins/notes"
	"github.com/ordo-run/ordo/plugins/sdk"
	"github.com/ordo-run/ordo/plugins/sheets"
	"github.com/ordo-run/ordo/plugins/text"
	"github.com/ordo-run/ordo/recommender"
)

// koreanQuery is one line of recommender/testdata/korean-queries.jsonl: a
// Korean request over the bundled tools, the tools it needs, and the
// English search phrases a model would answer with.
type koreanQuery struct {
	Query  string   `json:"query"`
	Tools  []string `json:"tools"`
	Search []string `json:"search"`
}

func koreanQueries(t *testing.T) []koreanQuery {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "recommender", "testdata", "korean-queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []koreanQuery
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var q koreanQuery
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatal(err)
		}
		out = append(out, q)
	}
	if len(out) < 40 {
		t.Fatalf("the Korean query set has %d requests, want at least 40", len(out))
	}
	return out
}

// bundledTools are the bundled plugins' tools, in process over temporary
// directories, and the built-in LLM tools.
func bundledTools(t *testing.T, m llm.LLM) []sdk.Tool {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	for _, d := range []string{"root", "files", "notes", "chat"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	var out []sdk.Tool
	for _, mk := range []func() ([]sdk.Tool, error){
		func() ([]sdk.Tool, error) {
			return files.Tools(files.Config{Root: root, DataDir: filepath.Join(dir, "files")})
		},
		func() ([]sdk.Tool, error) { return notes.Tools(notes.Config{DataDir: filepath.Join(dir, "notes")}) },
		func() ([]sdk.Tool, error) { return chat.Tools(chat.Config{DataDir: filepath.Join(dir, "chat")}) },
		func() ([]sdk.Tool, error) { return sheets.Tools(sheets.Config{Root: root}) },
		func() ([]sdk.Tool, error) { return text.Tools(text.Config{}) },
	} {
		ts, err := mk()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ts...)
	}
	return append(out, builtins(m)...)
}

// distractors are n tools of made-up services whose names and descriptions
// share everyday words with the bundled ones ("create a page", "send a
// message", "list files"), so a bundled tool must be found, not merely be
// present. Deterministic.
func distractors(n int) []sdk.Tool {
	verbs := []string{"create", "get", "list", "update", "delete", "send", "search", "export"}
	objects := []string{"invoice", "ticket", "contact", "order", "report", "page", "message", "file", "record", "task"}
	in := `{"type":"object","properties":{"id":{"type":"string","description":"Identifier"}}}`
	var out []sdk.Tool
	for i := 0; len(out) < n; i++ {
		svc := fmt.Sprintf("svc%03d", i/(len(verbs)*len(objects)))
		v, o := verbs[i%len(verbs)], objects[i/len(verbs)%len(objects)]
		out = append(out, tool(svc+"."+v+"_"+o, contracts.RiskRead, in, `{"type":"object"}`, nil, returns(map[string]any{})))
		out[len(out)-1].Contract.Description = fmt.Sprintf("%s a %s in the %s system.", strings.ToUpper(v[:1])+v[1:], o, svc)
	}
	return out
}

// searchEngine is an engine over tools with a real recommender indexing
// them all.
func searchEngine(t *testing.T, m llm.LLM, tools []sdk.Tool) *Engine {
	t.Helper()
	tt := newTools(t, tools...)
	return New(Config{}, Deps{Tools: tt, LLM: m, Store: newStore(), Recommender: indexed(t, tt)})
}

// indexed is a real recommender indexing every tool of tt.
func indexed(t *testing.T, tt *testTools) *recommender.Recommender {
	t.Helper()
	rec, err := recommender.New(recommender.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var cs []contracts.Contract
	for _, tl := range tt.List() {
		cs = append(cs, tl.Contract)
	}
	if err := rec.Upsert(t.Context(), cs...); err != nil {
		t.Fatal(err)
	}
	return rec
}

const emptyPlan = `{"version":"1.0","goal":"g","timezone":"UTC","actions":[]}`

func candidateNames(in map[string]any) []string {
	var out []string
	for _, c := range in["tool_candidates"].([]any) {
		out = append(out, c.(map[string]any)["tool"].(string))
	}
	return out
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// TestKoreanGoalsBundledCatalog: the bundled catalog is within
// AllToolsBound, so the planner sees every tool for every Korean request,
// in one call, and is never offered a tool search.
func TestKoreanGoalsBundledCatalog(t *testing.T) {
	m, srv := scripted(t)
	tools := bundledTools(t, m)
	if len(tools) > AllToolsBound {
		t.Fatalf("%d bundled tools exceed AllToolsBound %d", len(tools), AllToolsBound)
	}
	e := searchEngine(t, m, tools)
	qs := koreanQueries(t)
	found := 0
	for i, q := range qs {
		srv.Push(planner(emptyPlan))
		run, err := e.Plan(t.Context(), Request{Goal: q.Query})
		if err != nil || run.Error != nil {
			t.Fatalf("%s: %v %v", q.Query, err, run.Error)
		}
		in := plannerInput(t, srv, i)
		if containsAll(candidateNames(in), q.Tools) {
			found++
		}
		if in["tool_search"] != nil || run.LLMCalls["planner"] != 1 {
			t.Fatalf("%s: tool search offered (%v) or %d planner calls", q.Query, in["tool_search"], run.LLMCalls["planner"])
		}
	}
	if found < len(qs)*95/100 {
		t.Fatalf("the right tools were candidates for %d of %d Korean requests, want >= 95%%", found, len(qs))
	}
}

// TestKoreanGoalsLargeCatalog: over the bundled tools plus 4,000 others the
// goal is ranked. A Korean goal's words are nowhere in the index, so the
// planner is offered a tool search; the scripted model answers with English
// phrases, Ordo searches with them and asks again (2 planner calls), and
// the second candidates hold the right tools for >= 95% of the requests.
// The first candidates are topped up to K although nothing matched.
func TestKoreanGoalsLargeCatalog(t *testing.T) {
	m, srv := scripted(t)
	tools := append(bundledTools(t, m), distractors(4000)...)
	e := searchEngine(t, m, tools)
	qs := koreanQueries(t)
	found := 0
	calls := 0
	for _, q := range qs {
		phrases, _ := json.Marshal(map[string]any{"search_tools": q.Search})
		srv.Push(planner(string(phrases)), planner(emptyPlan))
		run, err := e.Plan(t.Context(), Request{Goal: q.Query})
		if err != nil || run.Error != nil {
			t.Fatalf("%s: %v %v", q.Query, err, run.Error)
		}
		first, second := plannerInput(t, srv, calls), plannerInput(t, srv, calls+1)
		calls += 2
		if first["tool_search"] != true || len(candidateNames(first)) != e.cfg.CandidatesK {
			t.Fatalf("%s: first call tool_search %v with %d candidates; want true and %d", q.Query,
				first["tool_search"], len(candidateNames(first)), e.cfg.CandidatesK)
		}
		if second["tool_search"] != nil || run.LLMCalls["planner"] != 2 {
			t.Fatalf("%s: second call offered a search (%v) or %d planner calls", q.Query, second["tool_search"], run.LLMCalls["planner"])
		}
		if got := candidateNames(second); containsAll(got, q.Tools) {
			found++
		} else {
			t.Logf("missed %v for %q (searched %q): %v", q.Tools, q.Query, q.Search, got)
		}
	}
	if found < len(qs)*95/100 {
		t.Fatalf("the right tools were candidates for %d of %d Korean requests, want >= 95%%", found, len(qs))
	}
	t.Logf("right tools among the candidates after the search round: %d of %d", found, len(qs))

	// An English goal is covered: no search offered, one planner call.
	srv.Push(planner(emptyPlan))
	run, err := e.Plan(t.Context(), Request{Goal: "post a message to the chat channel"})
	if err != nil || run.Error != nil {
		t.Fatal(err, run.Error)
	}
	in := plannerInput(t, srv, calls)
	if in["tool_search"] != nil || run.LLMCalls["planner"] != 1 || !slices.Contains(candidateNames(in), "chat.post_message") {
		t.Fatalf("English goal: tool_search %v, %d planner calls, candidates %v", in["tool_search"], run.LLMCalls["planner"], candidateNames(in))
	}
}

// TestToolSearchIsOneRoundAndOnlyWhenOffered: a search answer where none
// was offered, or a second search, fails the run as an invalid plan.
func TestToolSearchIsOneRoundAndOnlyWhenOffered(t *testing.T) {
	m, srv := scripted(t)
	e := searchEngine(t, m, append(bundledTools(t, m), distractors(200)...))
	search := `{"search_tools": ["create notes page"]}`

	srv.Push(planner(search))
	run, err := e.Plan(t.Context(), Request{Goal: "create a notes page for the meeting"})
	if err != nil || run.Error == nil || run.Error.Code != contracts.CodePlanFailed || run.LLMCalls["planner"] != 1 {
		t.Fatalf("unoffered search: %v %+v, %d planner calls", err, run.Error, run.LLMCalls["planner"])
	}

	srv.Push(planner(search), planner(search))
	run, err = e.Plan(t.Context(), Request{Goal: "오늘 회의록으로 노트 페이지를 만들어줘"})
	if err != nil || run.Error == nil || run.Error.Code != contracts.CodePlanFailed || run.LLMCalls["planner"] != 2 {
		t.Fatalf("second search: %v %+v, %d planner calls", err, run.Error, run.LLMCalls["planner"])
	}
	if srv.Pending() != 0 {
		t.Fatalf("%d scripted replies unused", srv.Pending())
	}
}
