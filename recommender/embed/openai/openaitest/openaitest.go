// Package openaitest serves an OpenAI-compatible /v1/embeddings endpoint
// for tests of the openai embedder, in its own package and through the
// ordo binary (recommender.embedder: openai).
package openaitest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// Server speaks /v1/embeddings for key and model, counting requests in
// calls and the texts embedded in texts (either may be nil); any other
// status than 200 answers every request with that error. Each vector
// counts the letters a..z of its input, so texts sharing letters are
// close: enough for a real ranking.
func Server(t testing.TB, key, model string, status int, calls, texts *atomic.Int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" || r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, "bad request path or key", http.StatusNotFound)
			return
		}
		if calls != nil {
			calls.Add(1)
		}
		if status != http.StatusOK {
			http.Error(w, `{"error":{"message":"boom"}}`, status)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != model {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		if texts != nil {
			texts.Add(int64(len(req.Input)))
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
