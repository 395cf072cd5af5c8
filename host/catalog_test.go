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
