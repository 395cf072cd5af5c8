package openai

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/recommender"
	"github.com/ordo-run/ordo/recommender/embed/openai/openaitest"
)

func TestEmbedderThroughRecommender(t *testing.T) {
	var calls atomic.Int64
	srv := openaitest.Server(t, "k-test", "m1", http.StatusOK, &calls, nil)
	e, err := New(Config{BaseURL: srv.URL + "/v1", APIKey: "k-test", Model: "m1", BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(e.Identity(), "k-test") {
		t.Fatalf("identity leaks the key: %s", e.Identity())
	}
	ctx := context.Background()
	vecs, err := e.EmbedDocuments(ctx, []string{"aa", "bb", "cc"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 3 || vecs[1][1] != 2 || calls.Load() != 2 {
		t.Fatalf("got %d vectors, b-count %v, %d requests; want 3, 2, 2 (batches of 2)", len(vecs), vecs[1][1], calls.Load())
	}

	r, err := recommender.New(recommender.Options{Embedder: e})
	if err != nil {
		t.Fatal(err)
	}
	tools := []contracts.Contract{
		{Tool: "weather.forecast", Description: "Weather forecast for a city", RiskLevel: contracts.RiskRead},
		{Tool: "mail.send", Description: "Send an email message", RiskLevel: contracts.RiskWrite},
	}
	if err := r.Upsert(ctx, tools...); err != nil {
		t.Fatal(err)
	}
	got, err := r.Recommend(ctx, "what is the weather forecast in Paris", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "weather.forecast" {
		t.Fatalf("Recommend = %v", got)
	}
	if r.Stats().Embedded != 2 || r.Stats().Identity != e.Identity() {
		t.Fatalf("stats %+v", r.Stats())
	}
}

func TestEmbedderErrorsAreCoded(t *testing.T) {
	var calls atomic.Int64
	srv := openaitest.Server(t, "k-test", "m1", http.StatusBadRequest, &calls, nil)
	e, err := New(Config{BaseURL: srv.URL + "/v1", APIKey: "k-test", Model: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.EmbedQuery(context.Background(), "hello")
	if contracts.CodeOf(err) != contracts.CodeExternal {
		t.Fatalf("err = %v, want code %d", err, contracts.CodeExternal)
	}
	r, err := recommender.New(recommender.Options{Embedder: e})
	if err != nil {
		t.Fatal(err)
	}
	err = r.Upsert(context.Background(), contracts.Contract{Tool: "a.b", Description: "x"})
	if contracts.CodeOf(err) != contracts.CodeExternal || r.Stats().Tools != 0 {
		t.Fatalf("Upsert with a failing endpoint: err %v, tools %d", err, r.Stats().Tools)
	}
}

func TestConfigValidation(t *testing.T) {
	if _, err := New(Config{}); contracts.CodeOf(err) != contracts.CodeInvalidConfig {
		t.Fatalf("missing model: %v", err)
	}
	if _, err := New(Config{Model: "m", Dimensions: -1}); contracts.CodeOf(err) != contracts.CodeInvalidConfig {
		t.Fatalf("negative dimensions: %v", err)
	}
}
