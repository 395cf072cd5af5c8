package mcpserver

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
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

	expired := newConfirmations(time.Nanosecond)
	tok = expired.add(p)
	time.Sleep(time.Millisecond)
	if _, ok := expired.take(tok, "bob"); ok {
		t.Fatal("an expired confirmation was accepted")
	}
}
