package host

import (
	"context"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testerr"
)

// A closed host refuses every new source with the code of every other
// admission refusal (6005, naming it), not 6004, which would invite a
// retry that can never succeed; removing a source it no longer has is
// the unknown-name error (1000), as on an open host.
func TestClosedHostRefusesSources(t *testing.T) {
	h := newHost(t)
	ctx := context.Background()
	p := addBuiltin(t, h)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"again":  h.AddProvider(ctx, "again", "v1", p),
		"plugin": h.AddPlugin(ctx, PluginSpec{Name: "plugin", Path: testPluginBin, SHA256: sha(t, testPluginBin)}),
	} {
		if ce := testerr.Code(t, err, contracts.CodePluginRefused); ce.Details["name"] != name {
			t.Fatalf("%s: details %v", name, ce.Details)
		}
	}
	if len(h.Sources()) != 0 || len(h.List()) != 0 {
		t.Fatalf("a closed host lists %v and %d tools", h.Sources(), len(h.List()))
	}
	testerr.Code(t, h.RemoveSource(ctx, "builtin"), contracts.CodeInvalidInput)
}
