package host

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testerr"
)

// Removing a plugin lets a call in flight finish before the process stops.
func TestRemoveDrainsInFlight(t *testing.T) {
	h := newHost(t)
	ctx := context.Background()
	if err := h.AddPlugin(ctx, PluginSpec{Name: "test", Path: testPluginBin}); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := h.Call(ctx, "test.sleep", json.RawMessage(`{"ms":200}`), "")
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond) // let the call reach the plugin
	if err := h.RemoveSource(ctx, "test"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("in-flight call failed: %v", err)
		}
	default:
		t.Fatal("RemoveSource returned before the in-flight call finished")
	}
	_, err := h.Call(ctx, "test.sleep", json.RawMessage(`{"ms":1}`), "")
	testerr.Code(t, err, contracts.CodeUnknownTool)
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"sha256":"` + "ab" + `","env":{"A":"b"},"args":["-v"]}`))
	f.Add([]byte(`{"sha256":1}`))
	f.Add([]byte(`{"sha": "x"}`))
	f.Add([]byte(`{} {}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := ParseManifest(raw)
		if err != nil {
			if contracts.CodeOf(err) != contracts.CodeInvalidConfig {
				t.Fatalf("uncoded error %v", err)
			}
			return
		}
		if _, err := json.Marshal(m); err != nil {
			t.Fatal(err)
		}
	})
}
