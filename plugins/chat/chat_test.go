package chat

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/internal/jsonl"
	"github.com/ordo-run/ordo/plugins/internal/plugintest"
)

func open(t *testing.T, cfg Config) *plugintest.Tools {
	t.Helper()
	tools, err := Tools(cfg)
	return plugintest.Server(t, tools, err)
}

func logLines(t *testing.T, dir, channel string) []line {
	t.Helper()
	raw, err := jsonl.Follow(filepath.Join(dir, "channels", channel+".jsonl")).Next()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]line, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

var tsPattern = regexp.MustCompile(`^[0-9]+\.[0-9]{6}$`)

func TestPostToOutboxAndList(t *testing.T) {
	dir := t.TempDir()
	c := open(t, Config{DataDir: dir})
	first := c.Call("chat.post_message", map[string]any{"channel": "#General", "text": "Meeting notes: ordo://notes/page_1"}, "")
	second := c.Call("chat.post_message", map[string]any{"channel": "general", "text": "second"}, "")
	c.Call("chat.post_message", map[string]any{"channel": "dev-ops", "text": "deploy"}, "")
	if first["channel"] != "general" || first["delivery"] != "outbox" || !tsPattern.MatchString(first["ts"].(string)) {
		t.Fatalf("post = %v", first)
	}
	if first["ts"].(string) >= second["ts"].(string) {
		t.Fatalf("ts not increasing: %v then %v", first["ts"], second["ts"])
	}
	lines := logLines(t, dir, "general")
	if len(lines) != 2 || lines[0].Text != "Meeting notes: ordo://notes/page_1" || lines[0].TS != first["ts"] || lines[0].Delivery != "outbox" {
		t.Fatalf("outbox = %+v", lines)
	}
	list := c.Call("chat.list_channels", map[string]any{}, "")
	got, _ := json.Marshal(list["channels"])
	devops := logLines(t, dir, "dev-ops")[0].TS
	want := `[{"last_ts":"` + devops + `","messages":1,"name":"dev-ops"},{"last_ts":"` + second["ts"].(string) + `","messages":2,"name":"general"}]`
	if string(got) != want {
		t.Fatalf("list_channels = %s\nwant %s", got, want)
	}
	if e := c.Err("chat.post_message", map[string]any{"channel": "../etc", "text": "x"}, ""); e.Code != contracts.CodeSchemaViolation {
		t.Fatalf("bad channel: %v", e)
	}
}

func TestIdempotentPostSurvivesRestartAndTornLine(t *testing.T) {
	dir := t.TempDir()
	c := open(t, Config{DataDir: dir})
	msg := map[string]any{"channel": "general", "text": "hello"}
	first := c.Call("chat.post_message", msg, "run-7/a2")
	if again := c.Call("chat.post_message", msg, "run-7/a2"); again["ts"] != first["ts"] {
		t.Fatalf("replay = %v, want %v", again, first)
	}
	// A crash mid-append leaves a torn line; the restarted plugin repairs it.
	f, _ := os.OpenFile(filepath.Join(dir, "channels", "general.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"ts":"1.000001","chan`)
	f.Close()
	c = open(t, Config{DataDir: dir})
	if again := c.Call("chat.post_message", msg, "run-7/a2"); again["ts"] != first["ts"] {
		t.Fatalf("after restart = %v, want %v", again, first)
	}
	if n := len(logLines(t, dir, "general")); n != 1 {
		t.Fatalf("%d messages logged, want 1", n)
	}
	later := c.Call("chat.post_message", msg, "run-8/a2")
	if later["ts"].(string) <= first["ts"].(string) {
		t.Fatalf("ts after restart %v not after %v", later["ts"], first["ts"])
	}
	c.Refused("chat.post_message", map[string]any{"channel": "general", "text": "other"}, "run-7/a2", "idempotency_key")
}

func TestConfiguredChannelsOnly(t *testing.T) {
	dir := t.TempDir()
	c := open(t, Config{DataDir: dir, Channels: []string{"#Team", "alerts"}})
	c.Call("chat.post_message", map[string]any{"channel": "team", "text": "hi"}, "")
	c.Refused("chat.post_message", map[string]any{"channel": "random", "text": "hi"}, "", "channel")
	list := c.Call("chat.list_channels", map[string]any{}, "")
	got, _ := json.Marshal(list["channels"])
	if !strings.HasPrefix(string(got), `[{"messages":0,"name":"alerts"},{"last_ts":`) {
		t.Fatalf("list_channels = %s", got)
	}
	if _, err := Tools(Config{DataDir: dir, Channels: []string{"bad name"}}); contracts.CodeOf(err) != contracts.CodeInvalidConfig {
		t.Fatalf("bad channel config: %v", err)
	}
}

// hook is a loopback Slack-compatible incoming webhook.
type hook struct {
	mu     sync.Mutex
	bodies []string
	status int
}

func (h *hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if h.status != 0 {
		w.WriteHeader(h.status)
		io.WriteString(w, "no_service at "+r.URL.Path) // as a proxy may answer
		return
	}
	h.bodies = append(h.bodies, string(body))
	io.WriteString(w, "ok")
}

func (h *hook) set(status int) {
	h.mu.Lock()
	h.status = status
	h.mu.Unlock()
}

func (h *hook) posted() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.bodies...)
}

func TestWebhookDelivery(t *testing.T) {
	h := &hook{}
	srv := httptest.NewServer(h)
	defer srv.Close()
	secretURL := srv.URL + "/services/T000/B000/XXXXSECRET"
	dir := t.TempDir()
	cfg := Config{DataDir: dir, WebhookURL: secretURL}
	c := open(t, cfg)
	msg := map[string]any{"channel": "general", "text": "Deployed \"v2\" ✓"}
	out := c.Call("chat.post_message", msg, "k1")
	if out["delivery"] != "webhook" {
		t.Fatalf("post = %v", out)
	}
	c.Call("chat.post_message", msg, "k1")
	c = open(t, cfg)
	c.Call("chat.post_message", msg, "k1")
	if got := h.posted(); len(got) != 1 || got[0] != `{"text":"Deployed \"v2\" ✓"}` {
		t.Fatalf("webhook received %q, want one Slack body", got)
	}
	if lines := logLines(t, dir, "general"); len(lines) != 1 || lines[0].Delivery != "webhook" {
		t.Fatalf("log = %+v", lines)
	}

	h.set(http.StatusServiceUnavailable)
	e := c.Err("chat.post_message", msg, "k2")
	if e.Code != contracts.CodeToolFailed || !e.Retryable {
		t.Fatalf("503: %v, want a retryable tool error", e)
	}
	h.set(http.StatusNotFound)
	e = c.Err("chat.post_message", msg, "k2")
	refused := e
	if e.Code != contracts.CodeToolFailed || e.Retryable || e.Details["status"] != 404 {
		t.Fatalf("404: %v, want a non-retryable tool error with the status", e)
	}
	h.set(0) // a failed call was not remembered: the same key posts now
	c.Call("chat.post_message", msg, "k2")
	if n := len(h.posted()); n != 2 {
		t.Fatalf("webhook received %d posts, want 2", n)
	}

	srv.Close()
	e = c.Err("chat.post_message", msg, "k3")
	if !e.Retryable {
		t.Fatalf("unreachable webhook: %v, want retryable", e)
	}
	for _, err := range []*contracts.Error{refused, e, contracts.AsError(func() error { _, err := Tools(Config{DataDir: dir, WebhookURL: "ftp://x/SECRET"}); return err }())} {
		if msg, _ := json.Marshal(err); strings.Contains(string(msg), "SECRET") {
			t.Fatalf("an error reveals the webhook URL: %s", msg)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("ORDO_PLUGIN_DATA_DIR", dir)
	t.Setenv(WebhookEnv, "https://hooks.example/x")
	t.Setenv(ChannelsEnv, " general, #ops ,,")
	cfg, err := ConfigFromEnv()
	if err != nil || cfg.DataDir != dir || cfg.WebhookURL != "https://hooks.example/x" || strings.Join(cfg.Channels, "|") != "general|#ops" {
		t.Fatalf("ConfigFromEnv = %+v, %v", cfg, err)
	}
}

// Only the outbox promises a key's message at most once across a crash, so
// only then may the host re-issue a post whose plugin died (a webhook post
// cut off by a crash may have left).
func TestPostIdempotentWithKeyOnlyForOutbox(t *testing.T) {
	for _, tc := range []struct {
		webhook string
		want    bool
	}{{"", true}, {"https://hooks.example/x", false}} {
		tools, err := Tools(Config{DataDir: t.TempDir(), WebhookURL: tc.webhook})
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools {
			if tool.Contract.Tool == "chat.post_message" && tool.Contract.IdempotentWithKey != tc.want {
				t.Errorf("webhook %q: idempotent_with_key %v, want %v", tc.webhook, tool.Contract.IdempotentWithKey, tc.want)
			}
		}
	}
}

// TestChannelsBoundedWithoutAllowList: with no allow-list, the plugin opens
// at most MaxChannels channels (a log file each); a post to one more is
// refused (field channel) and creates no file, while the open channels
// still take posts. Every new name a plan posted to was a new file.
func TestChannelsBoundedWithoutAllowList(t *testing.T) {
	dir := t.TempDir()
	c := open(t, Config{DataDir: dir})
	for i := range MaxChannels {
		c.Call("chat.post_message", map[string]any{"channel": fmt.Sprintf("c%d", i), "text": "x"}, "")
	}
	if e := c.Refused("chat.post_message", map[string]any{"channel": "one-more", "text": "x"}, "", "channel"); e.Details["limit"] != MaxChannels {
		t.Errorf("refusal details %v", e.Details)
	}
	c.Call("chat.post_message", map[string]any{"channel": "#C7", "text": "still open"}, "")
	files, _ := os.ReadDir(filepath.Join(dir, "channels"))
	if len(files) != MaxChannels {
		t.Fatalf("%d channel logs, want %d", len(files), MaxChannels)
	}
	// A restarted plugin counts the channels on disk.
	open(t, Config{DataDir: dir}).Refused("chat.post_message", map[string]any{"channel": "one-more", "text": "x"}, "", "channel")
}

// TestLogsMaxBytes: a post that would grow the channel logs past MaxBytes
// is refused (field text, details limit) before it is sent, and logs
// nothing; the logs grew without bound.
func TestLogsMaxBytes(t *testing.T) {
	dir := t.TempDir()
	var posted int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		posted++
		mu.Unlock()
	}))
	defer srv.Close()
	for _, hook := range []string{"", srv.URL} {
		os.RemoveAll(filepath.Join(dir, "channels"))
		c := open(t, Config{DataDir: dir, WebhookURL: hook, MaxBytes: 4000})
		accepted := 0
		for range 10 {
			if _, err := c.Try("chat.post_message", map[string]any{"channel": "log", "text": strings.Repeat("y", 1000)}, ""); err != nil {
				if e := contracts.AsError(err); e.Retryable || e.Details["field"] != "text" || e.Details["limit"] != int64(4000) {
					t.Fatalf("refused with %v (details %v)", e, e.Details)
				}
				break
			}
			accepted++
		}
		info, err := os.Stat(filepath.Join(dir, "channels", "log.jsonl"))
		if err != nil || info.Size() > 4000 || accepted == 0 || accepted == 10 || len(logLines(t, dir, "log")) != accepted {
			t.Fatalf("webhook %q: %d of 10 posts accepted, log %v, %v", hook, accepted, info.Size(), err)
		}
		mu.Lock()
		sent := posted
		mu.Unlock()
		if hook != "" && sent != accepted {
			t.Fatalf("%d posts sent to the webhook, %d accepted", sent, accepted)
		}
	}
}

// TestWebhookAnswerHidesPartOfPath: a refusing webhook's answer is quoted
// in the error without the secret path, also where the quoted part would
// end inside it (at 200 bytes, the first half of the path was quoted).
func TestWebhookAnswerHidesPartOfPath(t *testing.T) {
	const path = "/services/T000/B000/XXXXSECRETXXXXXXXXXXXX"
	for _, body := range []string{
		strings.Repeat("x", 180) + " no route for " + path,
		strings.Repeat(path+" ", 6) + strings.Repeat("y", 30) + path,
		strings.Repeat("z", 300) + path,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, body)
		}))
		c := open(t, Config{DataDir: t.TempDir(), WebhookURL: srv.URL + path})
		e := c.Err("chat.post_message", map[string]any{"channel": "general", "text": "hi"}, "")
		srv.Close()
		msg, _ := json.Marshal(e)
		if strings.Contains(string(msg), path[:5]) || e.Details["status"] != 404 {
			t.Errorf("error reveals part of the webhook path: %s", msg)
		}
	}
}

// TestWebhookRedirectNotFollowed: a webhook that redirects does not get
// the message re-posted elsewhere (a 307 did); the post fails with the
// status, not retryable.
func TestWebhookRedirectNotFollowed(t *testing.T) {
	elsewhere := &hook{}
	other := httptest.NewServer(elsewhere)
	defer other.Close()
	srv := httptest.NewServer(http.RedirectHandler(other.URL+"/collect", http.StatusTemporaryRedirect))
	defer srv.Close()
	c := open(t, Config{DataDir: t.TempDir(), WebhookURL: srv.URL + "/services/T0/B0/X"})
	e := c.Err("chat.post_message", map[string]any{"channel": "general", "text": "private"}, "")
	if e.Retryable || e.Details["status"] != http.StatusTemporaryRedirect || len(elsewhere.posted()) != 0 {
		t.Fatalf("redirect: %v (details %v), %d posts elsewhere", e, e.Details, len(elsewhere.posted()))
	}
}
