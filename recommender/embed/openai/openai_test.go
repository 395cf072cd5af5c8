package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/recommender"
)

// server speaks /v1/embeddings. Each vector counts the letters a..z of its
// input, so texts sharing letters are close: enough for a real ranking.
func server(t *testing.T, calls *atomic.Int64, status int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" || r.Header.Get("Authorization") != "Bearer k-test" {
			http.Error(w, "bad request path or key", http.StatusNotFound)
			return
		}
		calls.Add(1)
		if status != http.StatusOK {
			http.Error(w, `{"error":{"message":"boom"}}`, status)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "m1" {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		resp := struct {
			Object string `json:"object"`
			Model  string `json:"model"`
			Data   []item `json:"data"`
		}{Object: "list", Model: req.Model}
		for i, in := range req.Input {
			v := make([]float64, 26)
			for _, c := range strings.ToLower(in) {
				if c >= 'a' && c <= 'z' {
					v[c-'a']++
				}
			}
			v[0] += 0.01 // never all zero
			resp.Data = append(resp.Data, item{Object: "embedding", Index: i, Embedding: v})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestEmbedderThroughRecommender(t *testing.T) {
	var calls atomic.Int64
	srv := server(t, &calls, http.StatusOK)
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
	srv := server(t, &calls, http.StatusBadRequest)
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
