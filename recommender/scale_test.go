//go:build linux

package recommender

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
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
	base := append(benchTools(tb, "seal-tools"), benchTools(tb, "metatool")...)
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

// TestScale50k measures the scale goals on a 50,000-tool catalog
// and logs each of them: build in memory and persisted, query p50/p95 over
// the Seal-Tools dev queries, a restart that re-offers every tool (as ordo
// serve does), re-indexing one changed tool, and the peak RSS of build and
// restart; with the semantic list also its recall against an exact scan. Wall times sit beside the process's CPU time (user + system,
// GC included): on a shared machine the wall time is inflated by load, the
// CPU time much less. Nothing timed is asserted; the embedding counts are.
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
	// The hashes come with the tools, as the host's catalog carries them
	// (computed once when each tool is compiled); their cost is logged
	// apart, since a restart of ordo serve pays it in the host, not here.
	offers := make([]Offer, n)
	t.Logf("hash %d contracts: %v", n, measure(func() {
		for i, c := range tools {
			offers[i] = Offer{Contract: c, Hash: c.Hash()}
		}
	}))
	tools = nil // the offers are the catalog from here: the process's peak RSS holds one copy, as ordo's does
	queries := benchQueries(t, "seal-tools")
	ctx := context.Background()
	dir := t.TempDir()
	var r *Recommender
	open := func(dir string) func() {
		return func() {
			var err error
			if r, err = New(opts(dir)); err != nil {
				t.Fatal(err)
			}
			if err := r.UpsertOffers(ctx, offers...); err != nil {
				t.Fatal(err)
			}
		}
	}

	t.Logf("build in memory: %d tools, %v", n, measure(open("")))
	r = nil
	t.Logf("build persisted: %v", measure(open(dir)))

	// With semantic vectors, each query also runs without them
	// (SemanticWeight 0, same index), back to back and in alternating
	// order (the second run finds warm caches), so the two figures share
	// the machine's load. Besides wall time, each query's CPU time on its
	// own thread (the test goroutine is locked to it; a search runs on
	// the caller's goroutine) is what the query costs whatever the load.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	type lats struct{ wall, cpu []time.Duration }
	var on, off lats
	timed := func(q string, without bool) {
		w := r.rank.SemanticWeight
		if without {
			r.rank.SemanticWeight = 0
		}
		c, s := threadCPU(), time.Now()
		if _, err := r.Recommend(ctx, q, 10); err != nil {
			t.Fatal(err)
		}
		d, dc := time.Since(s), threadCPU()-c
		r.rank.SemanticWeight = w
		l := &on
		if without {
			l = &off
		}
		l.wall, l.cpu = append(l.wall, d), append(l.cpu, dc)
	}
	for i, q := range queries {
		both := r.opts.Semantic != nil
		timed(q.Query, both && i%2 == 1)
		if both {
			timed(q.Query, i%2 == 0)
		}
	}
	for name, l := range map[string]lats{"": on, " without the semantic list": off} {
		if len(l.wall) == 0 {
			continue
		}
		t.Logf("query over %d dev queries%s: wall p50 %v p95 %v, thread CPU p50 %v p95 %v", len(l.wall), name,
			pct(l.wall, 50), pct(l.wall, 95), pct(l.cpu, 50), pct(l.cpu, 95))
	}
	if r.opts.Semantic != nil {
		t.Logf("semantic list (two passes): recall of the exact scan's top 50 / 10 / 3 %.4f / %.4f / %.4f",
			semanticRecall(t, r, queries, 50), semanticRecall(t, r, queries, 10), semanticRecall(t, r, queries, 3))
	}

	r = nil
	t.Logf("restart (open + re-offer every tool): %v", measure(open(dir)))
	if st := r.Stats(); st.Tools != n || st.Embedded != 0 {
		t.Errorf("restart: %d tools, %d embedded; want %d, 0", st.Tools, st.Embedded, n)
	}

	// Re-index: 21 tools changed one at a time, the median and the worst.
	var reindex []time.Duration
	for i := range 21 {
		changed := offers[(n/2+i*997)%n].Contract
		changed.Description += " Also works offline."
		s := time.Now()
		if err := r.Upsert(ctx, changed); err != nil {
			t.Fatal(err)
		}
		reindex = append(reindex, time.Since(s))
	}
	slices.Sort(reindex)
	t.Logf("re-index one changed tool (persisted): median %v, max %v over %d tools",
		reindex[len(reindex)/2].Round(time.Microsecond), reindex[len(reindex)-1].Round(time.Microsecond), len(reindex))
	if got := r.Stats().Embedded; got != int64(len(reindex)) {
		t.Errorf("re-index embedded %d tools, want %d", got, len(reindex))
	}
}

// semanticRecall is the share of the exact semantic list's top k (every
// tool's full similarity) that the two-pass list finds, over the queries.
func semanticRecall(t *testing.T, r *Recommender, queries []QueryRecord, k int) float64 {
	ctx := context.Background()
	var found, all int
	for _, q := range queries {
		got, err := r.semanticScores(ctx, q.Query, nil)
		if err != nil {
			t.Fatal(err)
		}
		v, err := r.opts.Semantic.EmbedQuery(ctx, meaningText(q.Query)) // the query semanticScores embeds
		if err != nil {
			t.Fatal(err)
		}
		sim := make([]float64, len(r.lex.names))
		var near []int
		for s := range r.bySlot {
			if x := r.sem.dot(s, v); r.bySlot[s] != nil && x > r.rank.SemanticMin {
				sim[s] = x
				near = append(near, s)
			}
		}
		for _, s := range topN(near, sim, r.lex.names, k) {
			all++
			if _, ok := got[s]; ok {
				found++
			}
		}
	}
	return float64(found) / float64(max(all, 1))
}

// phase is what measure saw of one step.
type phase struct {
	wall, cpu time.Duration
	peak      string // the step's own high-water RSS, or the process's
}

func (p phase) String() string {
	return fmt.Sprintf("%v wall, %v CPU, peak RSS %s", p.wall.Round(time.Millisecond), p.cpu.Round(time.Millisecond), p.peak)
}

// measure runs f after a collection and a reset of the process's RSS
// high-water mark (Linux clear_refs 5; where that fails the peak is the
// whole process's so far), so the peak is f's own plus what was live.
func measure(f func()) phase {
	runtime.GC()
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	c, s := cpuTime(), time.Now()
	f()
	return phase{wall: time.Since(s), cpu: cpuTime() - c, peak: peakRSS()}
}

// pct is the p-th percentile of ds (sorted in place).
func pct(ds []time.Duration, p int) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)*p/100].Round(10 * time.Microsecond)
}

// threadCPU is the calling thread's user and system time so far.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_THREAD, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
