package recommender

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/recommender/embed/semantic"
)

// scaleCatalog replicates the Seal-Tools and MetaTool tools to n: copy c of
// a tool gets the name suffix "V<c>" and the first sentence of another
// tool's description appended, so postings and the vocabulary grow as in a
// real large catalog instead of repeating one text.
func scaleCatalog(tb testing.TB, n int) []contracts.Contract {
	dir := benchData(tb)
	var base []contracts.Contract
	for _, set := range []string{"seal-tools", "metatool"} {
		ts, err := readFile(filepath.Join(dir, set, "tools.jsonl"), ReadTools)
		if err != nil {
			tb.Fatal(err)
		}
		base = append(base, ts...)
	}
	out := make([]contracts.Contract, 0, n)
	for i := 0; len(out) < n; i++ {
		c := base[i%len(base)]
		if copyN := i / len(base); copyN > 0 {
			other, _, _ := strings.Cut(base[(i*797+copyN)%len(base)].Description, ".")
			c.Tool = c.Tool + "V" + strconv.Itoa(copyN)
			c.Description += " " + other
		}
		out = append(out, c)
	}
	return out
}

// TestScale50k measures the scale goals on a 50,000-tool catalog:
// build (persisted), query p50/p95 over the Seal-Tools dev queries, a
// restart that re-offers every tool (as ordo serve does), re-indexing one
// changed tool, and the process's peak RSS. Figures are logged, not
// asserted (timing on a shared machine); the embedding counts are.
// Run: ORDO_SCALE=50000 go test -run TestScale50k -v ./recommender/
// (ORDO_SCALE_SEMANTIC=1 adds the static meaning vectors, as `ordo` does
// by default).
func TestScale50k(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ORDO_SCALE"))
	if n <= 0 {
		t.Skip("set ORDO_SCALE to the catalog size, e.g. 50000")
	}
	opts := func(dir string) Options { return Options{Dir: dir} }
	if os.Getenv("ORDO_SCALE_SEMANTIC") != "" {
		sem, err := semantic.NewStatic()
		if err != nil {
			t.Fatal(err)
		}
		opts = func(dir string) Options { return Options{Dir: dir, Semantic: sem} }
	}
	tools := scaleCatalog(t, n)
	queries, err := readFile(filepath.Join(benchData(t), "seal-tools", "queries-dev.jsonl"), ReadQueries)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir := t.TempDir()

	start := time.Now()
	r, err := New(opts(""))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Upsert(ctx, tools...); err != nil {
		t.Fatal(err)
	}
	t.Logf("build in memory: %d tools in %v, peak RSS %s", r.Stats().Tools, time.Since(start).Round(time.Millisecond), peakRSS())
	r = nil
	runtime.GC()

	start = time.Now()
	r, err = New(opts(dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Upsert(ctx, tools...); err != nil {
		t.Fatal(err)
	}
	t.Logf("build persisted: %v", time.Since(start).Round(time.Millisecond))

	// With semantic vectors, each query also runs without them
	// (SemanticWeight 0, same index), back to back and in alternating
	// order (the second run finds warm caches), so the two figures share
	// the machine's load.
	lat := make([]time.Duration, 0, len(queries))
	var latOff []time.Duration
	timed := func(q string) time.Duration {
		s := time.Now()
		if _, err := r.Recommend(ctx, q, 10); err != nil {
			t.Fatal(err)
		}
		return time.Since(s)
	}
	w := r.rank.SemanticWeight
	for i, q := range queries {
		if r.opts.Semantic != nil && i%2 == 1 {
			r.rank.SemanticWeight = 0
			latOff = append(latOff, timed(q.Query))
			r.rank.SemanticWeight = w
		}
		lat = append(lat, timed(q.Query))
		if r.opts.Semantic != nil && i%2 == 0 {
			r.rank.SemanticWeight = 0
			latOff = append(latOff, timed(q.Query))
			r.rank.SemanticWeight = w
		}
	}
	for name, l := range map[string][]time.Duration{"": lat, " without the semantic list": latOff} {
		if len(l) == 0 {
			continue
		}
		slices.Sort(l)
		t.Logf("query over %d dev queries%s: p50 %v p95 %v", len(l), name, l[len(l)/2].Round(10*time.Microsecond),
			l[len(l)*95/100].Round(10*time.Microsecond))
	}

	start = time.Now()
	r, err = New(opts(dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Upsert(ctx, tools...); err != nil {
		t.Fatal(err)
	}
	st := r.Stats()
	t.Logf("restart (open + re-offer every tool): %v, %d tools, %d embedded", time.Since(start).Round(time.Millisecond), st.Tools, st.Embedded)
	if st.Tools != n || st.Embedded != 0 {
		t.Errorf("restart: %d tools, %d embedded; want %d, 0", st.Tools, st.Embedded, n)
	}

	changed := tools[n/2]
	changed.Description += " Also works offline."
	start = time.Now()
	if err := r.Upsert(ctx, changed); err != nil {
		t.Fatal(err)
	}
	t.Logf("re-index one changed tool: %v", time.Since(start).Round(time.Microsecond))
	if got := r.Stats().Embedded; got != 1 {
		t.Errorf("re-index embedded %d tools, want 1", got)
	}
	runtime.GC()
	t.Logf("peak RSS %s", peakRSS())
}

// peakRSS is the process's high-water resident set (Linux), for the log.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
