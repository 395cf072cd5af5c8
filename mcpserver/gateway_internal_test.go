package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/plugins/sdk"
)

func TestGatewayName(t *testing.T) {
	long := "svc." + strings.Repeat("x", 80)
	for id, want := range map[string]string{
		"fs.read_text_file":  "fs__read_text_file",
		"every.get-env":      "every__get-env",
		"a.b.c":              "a__b__c",
		"a.b__c":             "a__b__c___" + hash8("a.b__c"), // else a.b.c's name
		"a_.b":               "a___b___" + hash8("a_.b"),
		long:                 ("svc__" + strings.Repeat("x", 80))[:64-11] + "___" + hash8(long),
		"mem2.delete_things": "mem2__delete_things",
	} {
		if got := gatewayName(id); got != want {
			t.Errorf("gatewayName(%q) = %q, want %q", id, got, want)
		}
	}
}

func hash8(id string) string { return gatewayName(id)[len(gatewayName(id))-8:] }

var mcpToolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// FuzzGatewayName: every name is a valid MCP tool name that cannot be one
// of Ordo's own, and two catalog ids never share one (up to the 32-bit
// hash of the ids that need it).
func FuzzGatewayName(f *testing.F) {
	for _, seed := range [][2]string{{"a.b__c", "a.b.c"}, {"a_.b", "a._b"}, {"fs.read", "fs.write"}, {"x.y-z", "x.y_z"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if _, err := contracts.NewTool(contracts.Contract{Tool: a, Service: strings.Split(a, ".")[0], RiskLevel: contracts.RiskRead,
			InputSchema: json.RawMessage(`{}`), OutputSchema: json.RawMessage(`{}`)}); err != nil {
			return // not a catalog id
		}
		na := gatewayName(a)
		if !mcpToolName.MatchString(na) || !strings.Contains(na, "__") {
			t.Fatalf("gatewayName(%q) = %q", a, na)
		}
		if a != b && na == gatewayName(b) && !strings.Contains(na, "___") {
			t.Fatalf("%q and %q share %q", a, b, na)
		}
	})
}

func TestConfirmations(t *testing.T) {
	c := newConfirmations(time.Minute)
	p := pendingConfirm{user: "bob", tool: "notes.delete", digest: argsDigest(json.RawMessage(`{"id":"n1","force":true}`))}
	tok := c.add(p)
	if _, ok := c.take(tok, "eve"); ok {
		t.Fatal("another user took bob's confirmation")
	}
	got, ok := c.take(tok, "bob")
	if !ok || got.digest != argsDigest(json.RawMessage(` { "force": true, "id": "n1" }`)) {
		t.Fatalf("take: %+v %v (digest must not depend on key order)", got, ok)
	}
	if _, ok := c.take(tok, "bob"); ok {
		t.Fatal("a confirmation was answered twice")
	}
	if argsDigest(json.RawMessage(`{"id":"n2"}`)) == got.digest {
		t.Fatal("different arguments share a digest")
	}

	full := newConfirmations(time.Hour)
	first := full.add(p)
	for range maxPendingPerUser {
		full.add(p)
	}
	if _, ok := full.take(first, "bob"); ok || len(full.m) != maxPendingPerUser {
		t.Fatalf("the oldest of bob's %d confirmations was kept (%d held)", maxPendingPerUser+1, len(full.m))
	}
	for u := range maxPendingConfirms/maxPendingPerUser + 1 {
		for range maxPendingPerUser {
			full.add(pendingConfirm{user: fmt.Sprint("user", u)})
		}
	}
	if len(full.m) != maxPendingConfirms {
		t.Fatalf("%d confirmations held, want the bound %d", len(full.m), maxPendingConfirms)
	}

	// One user's flood of unanswered questions evicts only their own:
	// another user's pending confirmation stays answerable.
	shared := newConfirmations(time.Hour)
	bobs := shared.add(p)
	eve := pendingConfirm{user: "eve", tool: "notes.delete", digest: p.digest}
	for range maxPendingConfirms + 1 {
		shared.add(eve)
	}
	if _, ok := shared.take(bobs, "bob"); !ok {
		t.Fatal("eve's flood of confirmations evicted bob's")
	}

	expired := newConfirmations(time.Nanosecond)
	tok = expired.add(p)
	time.Sleep(time.Millisecond)
	if _, ok := expired.take(tok, "bob"); ok {
		t.Fatal("an expired confirmation was accepted")
	}
}

// BenchmarkGatewayCall compares one gateway tools/call (policy, two audit
// saves, host.Call, MCP encoding) with the bare host.Call it wraps.
func BenchmarkGatewayCall(b *testing.B) {
	h, err := host.New(host.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	p, err := host.InProcess(sdk.Tool{Contract: contracts.Contract{
		Tool: "text.upper", Service: "text", RiskLevel: contracts.RiskRead,
		InputSchema:  json.RawMessage(`{"type":"object","required":["text"],"properties":{"text":{"type":"string"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["upper"],"properties":{"upper":{"type":"string"}}}`),
	}, Handler: func(_ context.Context, c sdk.Call) (any, error) {
		return map[string]any{"upper": strings.ToUpper(c.Payload["text"].(string))}, nil
	}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := h.AddProvider(ctx, "text", "v1", p); err != nil {
		b.Fatal(err)
	}
	store := memory.NewMemStore()
	s, err := New(Options{Engine: agent.New(agent.Config{}, agent.Deps{Tools: h, Store: store}),
		Gateway: &Gateway{Tools: h}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.Run("gateway", func(b *testing.B) {
		ctx := withIdentity(ctx, Identity{User: "bench"})
		msg := json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"text__upper","arguments":{"text":"hi"}}}`)
		for b.Loop() {
			resp, ok := s.mcp.HandleMessage(ctx, msg).(mcp.JSONRPCResponse)
			if !ok {
				b.Fatal("no result")
			}
			if res, ok := resp.Result.(*mcp.CallToolResult); !ok || res.IsError {
				b.Fatalf("result %+v", resp.Result)
			}
		}
	})
	b.Run("host", func(b *testing.B) {
		for b.Loop() {
			if _, err := h.Call(ctx, "text.upper", json.RawMessage(`{"text":"hi"}`), "k"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
