package mcpserver_test

import (
	"context"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

func complete(t *testing.T, c *client.Client, ref any, arg, value string) *mcp.Completion {
	t.Helper()
	res, err := c.Complete(context.Background(), mcp.CompleteRequest{Params: mcp.CompleteParams{
		Ref: ref, Argument: mcp.CompleteArgument{Name: arg, Value: value}}})
	if err != nil {
		t.Fatalf("complete %v %s=%q: %v", ref, arg, value, err)
	}
	if res.Completion.Values == nil {
		t.Fatalf("complete %v %s: values must be an array", ref, arg)
	}
	return &res.Completion
}

func promptRef(name string) mcp.PromptReference {
	return mcp.PromptReference{Type: "ref/prompt", Name: name}
}

func resourceRef(uri string) mcp.ResourceReference {
	return mcp.ResourceReference{Type: "ref/resource", URI: uri}
}

func TestCompletions(t *testing.T) {
	e := newEnv(t)
	transports(t, e, clientOpts{}, func(t *testing.T, c *client.Client) {
		older := call(t, c, "plan", map[string]any{"plan": upperPlan("first")})["run_id"].(string)
		newer := call(t, c, "plan", map[string]any{"plan": deletePlan("n9")})["run_id"].(string)

		// Run ids, newest first, for the prompt argument and both templates.
		for _, ref := range []any{promptRef("review_run"), resourceRef("ordo://runs/{id}"), resourceRef("ordo://runs/{id}/mermaid")} {
			arg := "id"
			if _, ok := ref.(mcp.PromptReference); ok {
				arg = "run_id"
			}
			got := complete(t, c, ref, arg, "")
			if !slices.Equal(got.Values, []string{newer, older}) || got.Total != 2 || got.HasMore {
				t.Fatalf("%v: %+v, want [%s %s]", ref, got, newer, older)
			}
		}
		if got := complete(t, c, promptRef("review_run"), "run_id", older[:len(older)-2]); !slices.Equal(got.Values, []string{older}) {
			t.Fatalf("id prefix: %v", got.Values)
		}
		// A word of the goal finds the run too.
		if got := complete(t, c, resourceRef("ordo://runs/{id}"), "id", "DELETE"); !slices.Equal(got.Values, []string{newer}) {
			t.Fatalf("goal word: %v", got.Values)
		}
		if got := complete(t, c, promptRef("write_plan"), "goal", "shout"); !slices.Equal(got.Values, []string{"shout first"}) {
			t.Fatalf("goals: %v", got.Values)
		}

		// Services from the catalog; a list completes its last item.
		if got := complete(t, c, promptRef("write_plan"), "services", "te"); !slices.Equal(got.Values, []string{"test", "text"}) {
			t.Fatalf("services te: %v", got.Values)
		}
		if got := complete(t, c, promptRef("write_plan"), "services", "text, "); !slices.Equal(got.Values, []string{"text,notes", "text,test"}) {
			t.Fatalf("services after text: %v", got.Values)
		}

		// Nothing to suggest is an empty list, not an error.
		for _, ref := range []any{promptRef("no_such_prompt"), resourceRef("ordo://catalog"), promptRef("write_plan")} {
			if got := complete(t, c, ref, "nope", "x"); len(got.Values) != 0 {
				t.Fatalf("%v: %v", ref, got.Values)
			}
		}
	})
}

// TestCompletionsArePrivate: completion offers only the caller's own runs,
// even to an admin, so it never lists someone else's run ids.
func TestCompletionsArePrivate(t *testing.T) {
	e := newEnv(t)
	ts := e.httpServer(t)
	bob := httpClient(t, ts.URL, userToken, clientOpts{})
	ada := httpClient(t, ts.URL, adminToken, clientOpts{})
	bobs := call(t, bob, "plan", map[string]any{"plan": upperPlan("bob")})["run_id"].(string)
	adas := call(t, ada, "plan", map[string]any{"plan": upperPlan("ada")})["run_id"].(string)
	for who, want := range map[*client.Client]string{bob: bobs, ada: adas} {
		if got := complete(t, who, resourceRef("ordo://runs/{id}"), "id", "run_"); !slices.Equal(got.Values, []string{want}) {
			t.Fatalf("got %v, want only [%s]", got.Values, want)
		}
	}
}
