package recommender

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ordo-run/ordo/recommender/embed"
)

// TestTune is a manual tuning harness: ORDO_TUNE holds a JSON list of
// Ranking values (partial, over the defaults; a "Hashed" key sets embed.HashedOptions); each is evaluated on half 0
// of both dev sets. Skipped unless ORDO_TUNE is set.
func TestTune(t *testing.T) {
	spec := os.Getenv("ORDO_TUNE")
	if spec == "" {
		t.Skip("set ORDO_TUNE to a JSON list of rankings to compare")
	}
	dir := benchData(t)
	var raws []json.RawMessage
	if err := json.Unmarshal([]byte(spec), &raws); err != nil {
		t.Fatal(err)
	}
	for _, raw := range raws {
		rk := DefaultRanking()
		if err := json.Unmarshal(raw, &rk); err != nil {
			t.Fatal(err)
		}
		var eo struct{ Hashed embed.HashedOptions }
		if err := json.Unmarshal(raw, &eo); err != nil {
			t.Fatal(err)
		}
		for _, set := range []string{"seal-tools", "metatool"} {
			rep, err := Eval(context.Background(), filepath.Join(dir, set, "tools.jsonl"),
				filepath.Join(dir, set, "queries-dev.jsonl"), EvalOptions{Ranking: rk, Parts: 2, Part: 0, Embedder: embed.NewHashed(eo.Hashed)})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %-10s R1 %.3f R5 %.3f MRR %.3f F5 %.3f F10 %.3f | single R1 %.3f | multi F5 %.3f p50 %.2fms",
				raw, set, rep.All.R1, rep.All.R5, rep.All.MRR10, rep.All.Full5, rep.All.Full10, rep.Single.R1, rep.Multi.Full5, rep.P50MS)
		}
	}
}
