package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/recommender"
	"github.com/ordo-run/ordo/recommender/embed/openai/openaitest"
)

// TestRecommenderEmbedderFromConfig: each recommender.embedder value
// gives the index its embedders; openai reads its key from the variable
// api_key_env names and is called for the catalog.
func TestRecommenderEmbedderFromConfig(t *testing.T) {
	var calls, texts atomic.Int64
	srv := openaitest.Server(t, "k-emb", "emb-1", http.StatusOK, &calls, &texts)
	for _, c := range []struct{ yaml, semantic, identity string }{
		{"", "semantic/static", "hashed/"},
		{"recommender: {embedder: lexical}", "", "hashed/"},
		{fmt.Sprintf("recommender: {embedder: openai, openai: {base_url: %q, model: emb-1, api_key_env: EMB_KEY}}", srv.URL+"/v1"), "", "openai-compatible"},
	} {
		cfg := load(t, c.yaml)
		cfg.Bundled.Enabled = false
		a, err := Open(context.Background(), cfg, slog.New(slog.DiscardHandler), Options{Env: envOf("EMB_KEY", "k-emb")})
		if err != nil {
			t.Fatalf("%s: %v", c.yaml, err)
		}
		st := a.Recommender.Stats()
		a.Close()
		if (c.semantic == "") != (st.Semantic == "") || !strings.HasPrefix(st.Semantic, c.semantic) || !strings.HasPrefix(st.Identity, c.identity) {
			t.Errorf("%q: semantic %q identity %q", c.yaml, st.Semantic, st.Identity)
		}
	}
}

// TestCatalogEventsEmbedInOneBatch: the events of a hot-added plugin that
// wait in the channel become one Upsert, so an embeddings endpoint gets
// one request for all of the plugin's tools; a removal between additions
// keeps its place.
func TestCatalogEventsEmbedInOneBatch(t *testing.T) {
	var calls, texts atomic.Int64
	srv := openaitest.Server(t, "k-emb", "emb-1", http.StatusOK, &calls, &texts)
	cfg := load(t, fmt.Sprintf("recommender: {embedder: openai, openai: {base_url: %q, model: emb-1, api_key_env: EMB_KEY}}", srv.URL+"/v1"))
	ropts, err := RecommenderOptions(cfg, envOf("EMB_KEY", "k-emb"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := recommender.New(ropts)
	if err != nil {
		t.Fatal(err)
	}
	a := &App{Recommender: r, Log: slog.New(slog.DiscardHandler)}
	contract := func(name, desc string) contracts.Contract {
		return contracts.Contract{Tool: name, Service: "p", Description: desc, RiskLevel: contracts.RiskRead,
			InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object"}`)}
	}
	events := make(chan host.CatalogEvent, 8)
	for i, d := range []string{"Send a postcard", "Water the plants", "Feed the cat", "Walk the dog"} {
		c := contract(fmt.Sprintf("p.t%d", i), d)
		events <- host.CatalogEvent{Kind: host.Added, Tool: c.Tool, Contract: c}
	}
	events <- host.CatalogEvent{Kind: host.Removed, Tool: "p.t3"}
	c := contract("p.t3", "Walk the dog twice")
	events <- host.CatalogEvent{Kind: host.Added, Tool: c.Tool, Contract: c}
	close(events)
	a.indexEvents(context.Background(), events)
	// Four tools in one request, then the re-added one in another.
	if calls.Load() != 2 || texts.Load() != 5 {
		t.Errorf("embedding requests %d with %d texts, want 2 with 5", calls.Load(), texts.Load())
	}
	if st := r.Stats(); st.Tools != 4 {
		t.Errorf("indexed %d tools, want 4", st.Tools)
	}
	hits, err := r.Search(context.Background(), "walk the dog twice", recommender.SearchOptions{K: 1})
	if err != nil || len(hits) != 1 || hits[0].Contract.Description != "Walk the dog twice" {
		t.Errorf("re-added tool: %+v %v", hits, err)
	}
}

// TestCatalogEventsCarryTheHash: the index decides "unchanged" by the
// hash the catalog event carries, never hashing the contract itself: a
// re-offer under the same hash is not re-indexed (even a contract that
// differs, which the catalog would never send under one hash), a new hash
// is.
func TestCatalogEventsCarryTheHash(t *testing.T) {
	r, err := recommender.New(recommender.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := &App{Recommender: r, Log: slog.New(slog.DiscardHandler)}
	c := contracts.Contract{Tool: "p.t", Service: "p", Description: "Feed the cat", RiskLevel: contracts.RiskRead,
		InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object"}`)}
	other := c
	other.Description = "Walk the dog"
	offer := func(ev host.CatalogEvent) {
		events := make(chan host.CatalogEvent, 1)
		events <- ev
		close(events)
		a.indexEvents(context.Background(), events)
	}
	found := func(q string) string {
		hits, err := r.Search(context.Background(), q, recommender.SearchOptions{K: 1})
		if err != nil || len(hits) != 1 {
			t.Fatalf("search %q: %+v %v", q, hits, err)
		}
		return hits[0].Contract.Description
	}
	offer(host.CatalogEvent{Kind: host.Added, Tool: c.Tool, Contract: c, Hash: c.Hash()})
	offer(host.CatalogEvent{Kind: host.Changed, Tool: c.Tool, Contract: other, Hash: c.Hash()})
	if st := r.Stats(); st.Embedded != 1 || found("feed the cat") != "Feed the cat" {
		t.Fatalf("re-offer under the same hash was indexed: %+v", st)
	}
	offer(host.CatalogEvent{Kind: host.Changed, Tool: c.Tool, Contract: other, Hash: other.Hash()})
	if st := r.Stats(); st.Embedded != 2 || found("walk the dog") != "Walk the dog" {
		t.Fatalf("a new hash was not indexed: %+v", st)
	}
}
