package telemetry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/testwait"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/telemetry"
)

// gatedStore is a real store whose List waits for the gate, counting the
// calls and the most in flight at once.
type gatedStore struct {
	memory.Checkpointer
	gate            chan struct{}
	calls, inflight atomic.Int32
	mu              sync.Mutex
	most            int32
}

func (g *gatedStore) List(ctx context.Context, f memory.Filter) ([]memory.RunSummary, error) {
	g.calls.Add(1)
	n := g.inflight.Add(1)
	defer g.inflight.Add(-1)
	g.mu.Lock()
	g.most = max(g.most, n)
	g.mu.Unlock()
	<-g.gate
	return g.Checkpointer.List(ctx, f)
}

// noSources is a host with no plugins and no upstreams.
type noSources struct{}

func (noSources) Sources() []host.SourceInfo     { return nil }
func (noSources) Upstreams() []host.UpstreamInfo { return nil }

// TestScrapesShareStoreReads: /metrics answers without a token, and each
// scrape lists every unfinished run from the store. Scrapes that come
// together read the store one at a time and share the reads that began
// after they came, so a crowd of anonymous clients cannot multiply the
// store's load (each one listed every unfinished run, all at once).
func TestScrapesShareStoreReads(t *testing.T) {
	store := &gatedStore{Checkpointer: memory.NewMemStore(), gate: make(chan struct{})}
	m := telemetry.New()
	m.Watch(store, noSources{})
	var entered atomic.Int32
	h := m.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered.Add(1)
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()

	const scrapes = 16
	var wg sync.WaitGroup
	for range scrapes {
		wg.Go(func() {
			res, err := http.Get(ts.URL)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Errorf("scrape: %s", res.Status)
			}
		})
	}
	testwait.Until(t, 20*time.Second, "every scrape to reach the handler and one to read the store", func() bool {
		return entered.Load() == scrapes && store.calls.Load() >= 1
	})
	time.Sleep(200 * time.Millisecond) // time for the others to read the store too, if they would
	close(store.gate)
	wg.Wait()
	if store.most != 1 || store.calls.Load() >= scrapes {
		t.Fatalf("%d scrapes read the store %d times, %d at once; want one at a time, shared", scrapes, store.calls.Load(), store.most)
	}
}
