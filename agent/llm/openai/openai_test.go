package openai_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/agent/llm"
	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/agent/llm/openai"
	"github.com/ordo-run/ordo/contracts"
)

var schema = []byte(`{"type":"object","required":["ok"],"properties":{"ok":{"type":"boolean"}}}`)

func ask(system string) llm.Request {
	return llm.Request{
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: "hi"}},
		Schema:   schema, SchemaName: "verdict",
	}
}

func TestStructuredOutputSendsJSONSchema(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply{Role: "verifier", Content: `{"ok":true}`})
	c, err := openai.New(openai.Config{BaseURL: srv.URL, Model: "m", StructuredOutput: true})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Complete(context.Background(), ask("role: verifier\nJudge."))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != `{"ok":true}` || resp.Usage.PromptTokens != 10 || resp.Usage.CompletionTokens != 5 {
		t.Fatalf("resp = %+v", resp)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Role != "verifier" || reqs[0].Model != "m" {
		t.Fatalf("requests = %+v", reqs)
	}
	rf := string(reqs[0].ResponseFormat)
	if !strings.Contains(rf, `"json_schema"`) || !strings.Contains(rf, `"verdict"`) || !strings.Contains(rf, `"ok"`) {
		t.Fatalf("response_format = %s", rf)
	}
}

// TestUsageReported: the tokens the server reports, cached ones too, come
// back with the model the call asked for, on answers and on failures.
func TestUsageReported(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply{Content: `{"ok":true}`, Usage: &llmtest.Usage{Prompt: 1200, Completion: 80, Cached: 1024}},
		llmtest.Reply{Status: http.StatusBadRequest, Content: "no"})
	c, _ := openai.New(openai.Config{BaseURL: srv.URL, Model: "gpt-test"})
	resp, err := c.Complete(context.Background(), ask("role: planner"))
	if want := (llm.Usage{PromptTokens: 1200, CompletionTokens: 80, CachedTokens: 1024, Model: "gpt-test"}); err != nil || resp.Usage != want {
		t.Fatalf("usage = %+v (%v), want %+v", resp.Usage, err, want)
	}
	resp, err = c.Complete(context.Background(), ask("role: planner"))
	if contracts.CodeOf(err) != contracts.CodeLLMFailed || resp.Usage != (llm.Usage{Model: "gpt-test"}) {
		t.Fatalf("failed call: usage %+v, err %v", resp.Usage, err)
	}
}

func TestPlainJSONPromptingWithoutStructuredOutput(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply{Content: `{"ok":false}`})
	c, err := openai.New(openai.Config{BaseURL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(context.Background(), ask("role: planner\nPlan.")); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if len(r.ResponseFormat) != 0 {
		t.Fatalf("response_format sent: %s", r.ResponseFormat)
	}
	if !strings.Contains(r.Messages[0].Content, `"required":["ok"]`) {
		t.Fatalf("schema missing from system prompt: %q", r.Messages[0].Content)
	}
}

func TestHTTPErrorIsCodedLLMFailed(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply{Status: http.StatusBadRequest, Content: "bad model"})
	c, _ := openai.New(openai.Config{BaseURL: srv.URL, Model: "m"})
	_, err := c.Complete(context.Background(), ask("role: planner"))
	if contracts.CodeOf(err) != contracts.CodeLLMFailed {
		t.Fatalf("err = %v", err)
	}
}

func TestRetriesTransientFailure(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply{Status: http.StatusServiceUnavailable, Content: "busy"}, llmtest.Reply{Content: `{"ok":true}`})
	c, _ := openai.New(openai.Config{BaseURL: srv.URL, Model: "m", MaxRetries: ptr(1)})
	resp, err := c.Complete(context.Background(), ask("role: planner"))
	if err != nil || resp.Text != `{"ok":true}` || srv.Count("") != 2 {
		t.Fatalf("resp=%+v err=%v calls=%d", resp, err, srv.Count(""))
	}
}

func ptr(n int) *int { return &n }

// max_retries 0 means one attempt; unset means the default 2 retries.
func TestMaxRetriesZeroMeansNone(t *testing.T) {
	busy := llmtest.Reply{Status: http.StatusServiceUnavailable, Content: "busy"}
	for _, tc := range []struct {
		retries *int
		calls   int
	}{{ptr(0), 1}, {nil, 1 + openai.DefaultMaxRetries}, {ptr(1), 2}} {
		srv := llmtest.New(t, busy, busy, busy, busy)
		c, err := openai.New(openai.Config{BaseURL: srv.URL, Model: "m", MaxRetries: tc.retries})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Complete(context.Background(), ask("role: planner"))
		if contracts.CodeOf(err) != contracts.CodeLLMFailed || srv.Count("") != tc.calls {
			t.Errorf("max_retries %v: err %v, %d requests, want %d", tc.retries, err, srv.Count(""), tc.calls)
		}
	}
	if _, err := openai.New(openai.Config{Model: "m", MaxRetries: ptr(-1)}); contracts.CodeOf(err) != contracts.CodeInvalidConfig {
		t.Fatalf("negative retries: %v", err)
	}
}

func TestWholeCallBoundedByTimeout(t *testing.T) {
	block := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer hs.Close()
	defer close(block)
	c, _ := openai.New(openai.Config{BaseURL: hs.URL + "/v1", Model: "m", Timeout: 50 * time.Millisecond, MaxRetries: ptr(3)})
	_, err := c.Complete(context.Background(), ask("role: planner"))
	if contracts.CodeOf(err) != contracts.CodeLLMTimeout {
		t.Fatalf("err = %v", err)
	}
}

func TestConfigRefusesBadValues(t *testing.T) {
	if _, err := openai.New(openai.Config{}); contracts.CodeOf(err) != contracts.CodeInvalidConfig {
		t.Fatalf("no model: %v", err)
	}
}

// TestIgnoresOpenAIEnvironment: the endpoint is the configured one (or
// OpenAI's), never OPENAI_BASE_URL, which Ordo does not document.
func TestIgnoresOpenAIEnvironment(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	var asked string
	refuse := roundTripper(func(r *http.Request) (*http.Response, error) {
		asked = r.URL.Host
		return nil, errors.New("no network in this test")
	})
	c, err := openai.New(openai.Config{Model: "m", MaxRetries: ptr(0), HTTPClient: &http.Client{Transport: refuse}})
	if err != nil {
		t.Fatal(err)
	}
	c.Complete(context.Background(), ask("role: planner"))
	if asked != "api.openai.com" {
		t.Fatalf("asked %q, want api.openai.com", asked)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestDeepAnswerRefused: an answer nested deeper than contracts.MaxJSONDepth
// is refused (7002, naming 1016 and the limit) before openai-go decodes it,
// and is not asked again; the tokens it reports still count.
func TestDeepAnswerRefused(t *testing.T) {
	calls := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("Content-Type", "application/json")
		deep := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
		fmt.Fprintf(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"ok","extra":%s}}],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`, deep)
	}))
	defer hs.Close()
	c, _ := openai.New(openai.Config{BaseURL: hs.URL + "/v1", Model: "m", MaxRetries: ptr(2)})
	resp, err := c.Complete(context.Background(), ask("role: planner"))
	if contracts.CodeOf(err) != contracts.CodeLLMInvalidOutput || !strings.Contains(err.Error(), "ordo 1016: JSON nests deeper than 64 levels") || calls != 1 {
		t.Fatalf("%d calls: %v", calls, err)
	}
	if want := (llm.Usage{PromptTokens: 7, CompletionTokens: 3, Model: "m"}); resp.Usage != want {
		t.Fatalf("usage of the refused answer = %+v, want %+v", resp.Usage, want)
	}
}

// TestHugeAnswerRefused: an answer body over contracts.MaxMessageBytes is
// refused as it is read (7002, not asked again): an endpoint cannot make
// Ordo hold any amount of memory, whatever it streams.
func TestHugeAnswerRefused(t *testing.T) {
	calls := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"`)
		chunk := strings.Repeat("a", 1<<16)
		for written := 0; written <= contracts.MaxMessageBytes+1<<20; written += len(chunk) {
			if _, err := fmt.Fprint(w, chunk); err != nil {
				return
			}
		}
		fmt.Fprint(w, `"}}],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`)
	}))
	defer hs.Close()
	c, _ := openai.New(openai.Config{BaseURL: hs.URL + "/v1", Model: "m", MaxRetries: ptr(2)})
	resp, err := c.Complete(context.Background(), ask("role: planner"))
	if contracts.CodeOf(err) != contracts.CodeLLMInvalidOutput || !strings.Contains(err.Error(), "bytes") || calls != 1 || resp.Text != "" {
		t.Fatalf("%d calls, %d bytes of text: %v", calls, len(resp.Text), err)
	}
}

// TestNullAnswerIsInvalidOutput: a 200 answer whose body is JSON null
// (a broken proxy, a hostile endpoint) decodes to no completion at all
// and no error in openai-go; it is 7002, not a nil dereference that
// takes down the process serving every run.
func TestNullAnswerIsInvalidOutput(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, "null")
	}))
	defer hs.Close()
	c, _ := openai.New(openai.Config{BaseURL: hs.URL + "/v1", Model: "m", MaxRetries: ptr(0)})
	resp, err := c.Complete(context.Background(), ask("role: planner"))
	if contracts.CodeOf(err) != contracts.CodeLLMInvalidOutput || resp.Text != "" {
		t.Fatalf("resp %+v, err %v", resp, err)
	}
}

// TestSlowDripBoundedByTimeout: an endpoint that sends its headers at
// once and then its body a byte at a time is bounded by the same timeout
// as one that never answers (7003).
func TestSlowDripBoundedByTimeout(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for {
			if _, err := fmt.Fprint(w, " "); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-time.After(10 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
	}))
	defer hs.Close()
	c, _ := openai.New(openai.Config{BaseURL: hs.URL + "/v1", Model: "m", Timeout: 200 * time.Millisecond})
	if _, err := c.Complete(context.Background(), ask("role: planner")); contracts.CodeOf(err) != contracts.CodeLLMTimeout {
		t.Fatalf("err = %v", err)
	}
}
