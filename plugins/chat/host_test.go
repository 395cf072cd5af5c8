package chat_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/ordo-run/ordo/host/hosttest"
)

// TestThroughHost runs the real ordo-plugin-chat binary under the host with
// a loopback webhook: one post per idempotency key, even across a restart.
func TestThroughHost(t *testing.T) {
	var posts atomic.Int32
	var last atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		last.Store(string(body))
		posts.Add(1)
	}))
	defer srv.Close()
	env := map[string]string{"ORDO_CHAT_WEBHOOK_URL": srv.URL + "/hook"}
	msg := map[string]any{"channel": "#general", "text": "Meeting notes: ordo://notes/page_1"}

	p := hosttest.Start(t, hosttest.Build(t, "chat"), "chat", t.TempDir(), env)
	first := p.Call("chat.post_message", msg, "run-1/a2")
	p.Call("chat.post_message", msg, "run-1/a2")
	p = p.Restart()
	again := p.Call("chat.post_message", msg, "run-1/a2")
	if posts.Load() != 1 || again["ts"] != first["ts"] || last.Load() != `{"text":"Meeting notes: ordo://notes/page_1"}` {
		t.Fatalf("%d posts (last %v); ts %v then %v", posts.Load(), last.Load(), first["ts"], again["ts"])
	}
	if list := p.Call("chat.list_channels", map[string]any{}, ""); len(list["channels"].([]any)) != 1 {
		t.Fatalf("list_channels = %v", list)
	}
}
