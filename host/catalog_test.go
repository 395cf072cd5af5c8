package host

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

func tool(t *testing.T, name, desc string) *contracts.Tool {
	t.Helper()
	ct, err := contracts.NewTool(contracts.Contract{Tool: name, Service: "svc", Description: desc, RiskLevel: contracts.RiskRead,
		InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object"}`)})
	if err != nil {
		t.Fatal(err)
	}
	return ct
}

func TestCatalogEvents(t *testing.T) {
	c := newCatalog()
	a, b := newSource("a", kindProvider, originAPI), newSource("b", kindProvider, originAPI)
	if err := c.set(a, []*contracts.Tool{tool(t, "svc.one", "v1"), tool(t, "svc.two", "v1")}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch := c.subscribe(ctx)
	// Replay of the current tools, at the current version.
	for _, want := range []string{"svc.one", "svc.two"} {
		if ev := <-ch; ev.Kind != Added || ev.Tool != want || ev.Version != 2 {
			t.Fatalf("replay %+v", ev)
		}
	}
	if err := c.set(a, []*contracts.Tool{tool(t, "svc.one", "v2"), tool(t, "svc.three", "v1")}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []CatalogEvent{{Kind: Changed, Tool: "svc.one", Version: 3}, {Kind: Added, Tool: "svc.three", Version: 4}, {Kind: Removed, Tool: "svc.two", Version: 5}} {
		ev := <-ch
		if ev.Kind != want.Kind || ev.Tool != want.Tool || ev.Version != want.Version {
			t.Fatalf("want %+v, got %+v", want, ev)
		}
	}
	err := c.set(b, []*contracts.Tool{tool(t, "svc.one", "mine")})
	if contracts.CodeOf(err) != contracts.CodePluginRefused {
		t.Fatalf("conflict: %v", err)
	}
	if e, _ := c.lookup("svc.one"); e.src != a || c.version != 5 {
		t.Fatal("a refused set changed the catalog")
	}
	cancel()
	for range ch { // closed once ctx ends
	}
}

// TestCatalogHash: every event carries its contract's hash, and setting a
// source's tools again with equal contracts (compiled anew, as a restarted
// plugin describes them) emits nothing.
func TestCatalogHash(t *testing.T) {
	c := newCatalog()
	a := newSource("a", kindProvider, originAPI)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := c.subscribe(ctx)
	if err := c.set(a, []*contracts.Tool{tool(t, "svc.one", "v1")}); err != nil {
		t.Fatal(err)
	}
	ev := <-ch
	if ev.Kind != Added || ev.Hash == "" || ev.Hash != ev.Contract.Hash() {
		t.Fatalf("added event %+v: want the contract's hash", ev)
	}
	if err := c.set(a, []*contracts.Tool{tool(t, "svc.one", "v1")}); err != nil {
		t.Fatal(err)
	}
	if c.version != 1 {
		t.Fatalf("an unchanged set emitted events: version %d", c.version)
	}
	if err := c.set(a, []*contracts.Tool{tool(t, "svc.one", "v2")}); err != nil {
		t.Fatal(err)
	}
	if ev2 := <-ch; ev2.Kind != Changed || ev2.Version != 2 || ev2.Hash == ev.Hash || ev2.Hash != ev2.Contract.Hash() {
		t.Fatalf("changed event %+v after %+v", ev2, ev)
	}
}

// TestCheckContractsReuses: a re-described contract whose hash matches the
// listed tool keeps that compiled tool; a changed one is compiled anew.
func TestCheckContractsReuses(t *testing.T) {
	one, two := tool(t, "svc.one", "v1"), tool(t, "svc.two", "v1")
	listed := map[string]*contracts.Tool{"svc.one": one, "svc.two": two}
	changed := two.Contract
	changed.Description = "v2"
	got, err := checkContracts([]contracts.Contract{one.Contract, changed}, listed)
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != one || got[1] == two || got[1].Contract.Description != "v2" {
		t.Fatalf("reuse: %p %p, listed %p %p", got[0], got[1], one, two)
	}
}

// TestDescribeAgainCompilesNothing: describing a source again (as a
// restart or an upstream's re-list does) keeps every compiled tool whose
// contract is unchanged, and setting the result emits no event.
func TestDescribeAgainCompilesNothing(t *testing.T) {
	h, ctx := newHost(t), context.Background()
	p := addBuiltin(t, h)
	h.mu.Lock()
	src := h.sources["builtin"]
	h.mu.Unlock()
	listed := h.cat.listed(src)
	tools, err := h.describe(ctx, src, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if listed[tl.Name()] != tl {
			t.Fatalf("%s compiled again", tl.Name())
		}
	}
	version := h.cat.version
	if err := h.cat.set(src, tools); err != nil || h.cat.version != version {
		t.Fatalf("an unchanged re-describe: %v, version %d -> %d", err, version, h.cat.version)
	}
}
