package openai_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/ordo-run/ordo/agent/llm/openai"
	"github.com/ordo-run/ordo/contracts"
)

// FuzzAnswerBody: whatever a 200 answer's body holds, Complete returns an
// answer or a coded LLM error (7xxx) and never panics (a body of null once
// did). Token counts are the endpoint's word; the engine bounds them
// (llm.Usage.Bounded).
func FuzzAnswerBody(f *testing.F) {
	for _, seed := range []string{
		`{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":1,"completion_tokens":2}}`,
		`null`, `{}`, `[]`, `""`, `{"choices":null}`, `{"choices":[null]}`, `{"choices":[{}]}`,
		`{"choices":[{"message":null}]}`, `{"choices":[{"message":{"content":null}}]}`,
		`{"choices":[{"message":{"content":"x"}}]} trailing`, `{"usage":{"prompt_tokens":-1}}`,
	} {
		f.Add([]byte(seed))
	}
	var mu sync.Mutex
	var body []byte
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		b := body
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	f.Cleanup(hs.Close)
	c, err := openai.New(openai.Config{BaseURL: hs.URL + "/v1", Model: "m", MaxRetries: ptr(0)})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		mu.Lock()
		body = b
		mu.Unlock()
		_, err := c.Complete(context.Background(), ask("role: planner"))
		if err != nil && contracts.CodeOf(err)/1000 != 7 {
			t.Fatalf("body %q: uncoded error %v", b, err)
		}
	})
}
