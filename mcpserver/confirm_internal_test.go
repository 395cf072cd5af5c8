package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
)

// An answer counts only for the question this server asked: its token,
// its user, its arguments (whatever their key order), once. A forged,
// replayed or moved answer is refused and nothing runs.
func TestConfirmationBinding(t *testing.T) {
	s := &Server{log: slog.New(slog.DiscardHandler)}
	d := &toolDef{name: "add_upstream", pending: newConfirmations(confirmTTL)}
	asked := json.RawMessage(`{"name":"calc","mcp_url":"http://127.0.0.1:9/mcp"}`)
	pinned := json.RawMessage(`{"name":"calc","mcp_url":"http://127.0.0.1:9/mcp","pinned":true}`)
	ask := func() string {
		return stateConfirm + d.pending.add(pendingConfirm{user: "local", tool: d.name, digest: argsDigest(asked), runArgs: pinned})
	}
	approve := mcp.InputResponses{inputAnswer: mcp.NewElicitationInputResponse(mcp.ElicitationResult{
		ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"decision": "approve"}}})}
	retry := func(user, state string, args json.RawMessage) (json.RawMessage, error) {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.RequestState, req.Params.InputResponses = d.name, state, approve
		res, run, err := s.confirmed(withIdentity(context.Background(), Identity{User: user}), req, d, args)
		if res != nil {
			t.Fatalf("a retry asked again: %+v", res)
		}
		return run, err
	}
	refused := func(what string, run json.RawMessage, err error) {
		t.Helper()
		if contracts.CodeOf(err) != contracts.CodeInvalidInput || run != nil {
			t.Errorf("%s: %v %s, want 1000 and nothing to run", what, err, run)
		}
	}

	run, err := retry("local", stateConfirm+"0123456789abcdef0123456789abcdef", asked)
	refused("forged token", run, err)
	run, err = retry("local", stateElicit+"run:1", asked)
	refused("another kind of state", run, err)
	run, err = retry("local", ask(), json.RawMessage(`{"name":"calc","mcp_url":"http://evil.example/mcp"}`))
	refused("other arguments", run, err)
	run, err = retry("mallory", ask(), asked)
	refused("another user", run, err)

	state := ask()
	run, err = retry("local", state, json.RawMessage(`{ "mcp_url": "http://127.0.0.1:9/mcp", "name": "calc" }`))
	if err != nil || string(run) != string(pinned) {
		t.Fatalf("approved: %s %v, want the pinned arguments", run, err)
	}
	run, err = retry("local", state, asked)
	refused("replayed", run, err)
}
