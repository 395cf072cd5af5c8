package recommender

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/recommender/embed"
)

// TestTune is a manual tuning harness: ORDO_TUNE holds a JSON list of
// Ranking values (partial, over the defaults; a "Hashed" key sets
// embed.HashedOptions); each is evaluated on half 0 of both dev sets, or on
// the parts ORDO_TUNE_PARTS lists ("0,1,all": halves 0 and 1 and the whole
// set). A "Lexical": true key leaves out the static meaning vectors
// (embed/semantic). Skipped unless ORDO_TUNE is set.
func TestTune(t *testing.T) {
	spec := os.Getenv("ORDO_TUNE")
	if spec == "" {
		t.Skip("set ORDO_TUNE to a JSON list of rankings to compare")
	}
	dir := benchData(t)
	parts := []int{0}
	if p := os.Getenv("ORDO_TUNE_PARTS"); p != "" {
		parts = nil
		for _, f := range strings.Split(p, ",") {
			switch n, err := strconv.Atoi(f); {
			case f == "all":
				parts = append(parts, -1)
			case err == nil && (n == 0 || n == 1):
				parts = append(parts, n)
			default:
				t.Fatalf("ORDO_TUNE_PARTS: want 0, 1 or all, got %q", f)
			}
		}
	}
	var raws []json.RawMessage
	if err := json.Unmarshal([]byte(spec), &raws); err != nil {
		t.Fatal(err)
	}
	for _, raw := range raws {
		rk := DefaultRanking()
		if err := json.Unmarshal(raw, &rk); err != nil {
			t.Fatal(err)
		}
		var eo struct {
			Hashed  embed.HashedOptions
			Lexical bool
		}
		if err := json.Unmarshal(raw, &eo); err != nil {
			t.Fatal(err)
		}
		for _, part := range parts {
			for _, set := range []string{"seal-tools", "metatool"} {
				eo := EvalOptions{Ranking: rk, Parts: 2, Part: part, Embedder: embed.NewHashed(eo.Hashed), Lexical: eo.Lexical}
				if part < 0 {
					eo.Parts, eo.Part = 0, 0
				}
				rep, err := Eval(context.Background(), filepath.Join(dir, set, "tools.jsonl"),
					filepath.Join(dir, set, "queries-dev.jsonl"), eo)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s part %2d %-10s R1 %.4f R5 %.4f MRR %.3f F5 %.3f F10 %.3f | single R1 %.3f | multi F5 %.3f F10 %.3f p50 %.2fms",
					raw, part, set, rep.All.R1, rep.All.R5, rep.All.MRR10, rep.All.Full5, rep.All.Full10, rep.Single.R1, rep.Multi.Full5, rep.Multi.Full10, rep.P50MS)
			}
		}
	}
}
