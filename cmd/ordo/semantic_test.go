package main_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ordo-run/ordo/recommender/embed/openai/openaitest"
)

// TestRecommenderEmbedderThroughCLI drives recommender.embedder through
// the real binary: by default (semantic) `ordo tools search` finds a
// sheets tool for a request that shares no word with them; lexical
// (ORDO_RECOMMENDER_EMBEDDER) finds nothing; openai calls the configured
// endpoint with the key from api_key_env; `ordo config validate` names
// the bad key.
func TestRecommenderEmbedderThroughCLI(t *testing.T) {
	t.Parallel()
	const query = "what does the spreadsheet say"
	search := func(e *env) []string {
		t.Helper()
		r := e.ordo("", "tools", "search", query, "-k", "3", "--json")
		r.want(t, 0)
		var hits []struct{ Tool string }
		if err := json.Unmarshal([]byte(r.stdout), &hits); err != nil {
			t.Fatalf("hits %s: %v", r.stdout, err)
		}
		var names []string
		for _, h := range hits {
			names = append(names, h.Tool)
		}
		return names
	}
	e := newEnv(t)
	// Among the three hits, as the planner's candidates would hold it: the
	// static meaning vectors order a short request's hits only roughly.
	if got := search(e); !slices.ContainsFunc(got, func(tool string) bool { return strings.HasPrefix(tool, "sheets.") }) {
		t.Errorf("semantic (default): %v, want a sheets tool among them", got)
	}
	e.vars = append(e.vars, "ORDO_RECOMMENDER_EMBEDDER=lexical")
	if got := search(e); len(got) != 0 {
		t.Errorf("lexical: %v, want no hit (no shared word)", got)
	}

	var calls, texts atomic.Int64
	srv := openaitest.Server(t, "k-emb", "emb-1", http.StatusOK, &calls, &texts)
	e = newEnv(t)
	cfg := filepath.Join(e.home, "ordo.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("recommender:\n  embedder: openai\n  openai:\n    base_url: %s/v1\n    model: emb-1\n    api_key_env: EMB_KEY\n", srv.URL)), 0o600)
	e.vars = append(e.vars, "ORDO_CONFIG="+cfg, "EMB_KEY=k-emb")
	e.ordo("", "config", "validate").want(t, 0)
	r := e.ordo("", "tools", "search", "post a message to a chat channel", "-k", "3", "--json")
	r.want(t, 0)
	if !strings.Contains(r.stdout, "chat.post_message") || calls.Load() < 2 || texts.Load() < 2 {
		t.Errorf("openai: %d requests, %d texts; hits %s", calls.Load(), texts.Load(), r.stdout)
	}
	if strings.Contains(r.stdout+r.stderr, "k-emb") {
		t.Error("the embedding key was printed")
	}

	for _, c := range []struct{ yaml, key string }{
		{"recommender: {embedder: neural}", "recommender.embedder"},
		{"recommender: {embedder: openai, openai: {model: \"\"}}", "recommender.openai.model"},
		{"recommender: {embedder: openai, openai: {base_url: \"ftp://x\"}}", "recommender.openai.base_url"},
		{"recommender: {embedder: openai, openai: {api_key_env: \"A-B\"}}", "recommender.openai.api_key_env"},
	} {
		os.WriteFile(cfg, []byte(c.yaml), 0o600)
		r := e.ordo("", "config", "validate")
		r.want(t, 2)
		if !strings.Contains(r.stderr, "error 1014") || !strings.Contains(r.stderr, c.key) {
			t.Errorf("%s: %s", c.yaml, r.stderr)
		}
	}
}
