package memory

import (
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// Every version below the current one needs an upgrade, or old checkpoints
// stop loading.
func TestUpgradeRegistryComplete(t *testing.T) {
	if len(upgrades) != contracts.RunFormatVersion {
		t.Fatalf("%d upgrades registered for format %d", len(upgrades), contracts.RunFormatVersion)
	}
	for v, up := range upgrades {
		if up == nil {
			t.Fatalf("no upgrade from version %d", v)
		}
	}
}
