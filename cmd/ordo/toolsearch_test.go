package main_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/contracts"
)

// TestKoreanGoalSeesEveryBundledTool: `ordo run` with a Korean goal over
// the bundled catalog (within the all-tools bound): the planner's one call
// lists every tool, none of them ranked away, no tool search is offered,
// and the plan it answers runs.
func TestKoreanGoalSeesEveryBundledTool(t *testing.T) {
	t.Parallel()
	plan := `{"version":"1.0","goal":"회의 노트 찾기","timezone":"UTC","actions":[
		{"id":"pages","tool":"notes.query_pages","intent":"search","requires":[],"produces":["records"],
		 "inputs":{"title_contains":"회의"}}]}`
	e := newEnv(t)
	srv := e.withModel(
		llmtest.Reply{Role: "planner", Content: plan},
		llmtest.Reply{Role: "composer", Content: "회의 노트가 없습니다."})
	r := e.ordo("", "run", "제목에 '회의'가 들어간 노트 페이지들을 찾아줘", "--json")
	run := r.wantRun(t, 0)
	if run.Status != contracts.RunCompleted || run.LLMCalls["planner"] != 1 {
		t.Fatalf("status %s, llm calls %v", run.Status, run.LLMCalls)
	}
	var in struct {
		Candidates []struct {
			Tool string `json:"tool"`
		} `json:"tool_candidates"`
		ToolSearch any `json:"tool_search"`
	}
	if err := json.Unmarshal([]byte(srv.Requests()[0].Messages[1].Content), &in); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range in.Candidates {
		got = append(got, c.Tool)
	}
	listed := e.ordo("", "tools", "list", "--json")
	listed.want(t, 0)
	var all []struct {
		Tool string `json:"tool"`
	}
	if err := json.Unmarshal([]byte(listed.stdout), &all); err != nil {
		t.Fatalf("tools list: %v\n%s", err, listed.stdout)
	}
	for _, tl := range all {
		if !slices.Contains(got, tl.Tool) {
			t.Errorf("the planner was not shown %s (got %d of %d tools)", tl.Tool, len(got), len(all))
		}
	}
	if len(all) < 16 || in.ToolSearch != nil {
		t.Errorf("%d tools listed, tool_search %v", len(all), in.ToolSearch)
	}
}
