package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/internal/plugintest"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// Issue 13 item 3: two plugin processes (two Ordo servers) share the data
// directory; each Tools below has its own lock file descriptor, as two
// processes would. A key used through one is honoured by the other, each
// sees the other's messages, and posting at once loses no line and hands
// out no ts twice.
func TestTwoProcessesShareTheOutbox(t *testing.T) {
	dir := t.TempDir()
	a, b := open(t, Config{DataDir: dir}), open(t, Config{DataDir: dir})
	msg := map[string]any{"channel": "ops", "text": "page ready"}
	first := a.Call("chat.post_message", msg, "run-1/a4")
	if again := b.Call("chat.post_message", msg, "run-1/a4"); again["ts"] != first["ts"] {
		t.Fatalf("b re-issued a's key: %v, a posted %v", again, first)
	}
	const posts = 15
	var wg sync.WaitGroup
	for i, p := range []*plugintest.Tools{a, b} {
		wg.Go(func() {
			for n := range posts {
				p.Call("chat.post_message", map[string]any{"channel": "ops", "text": fmt.Sprint(i, "-", n)}, fmt.Sprint(i, "/", n))
			}
		})
	}
	wg.Wait()
	lines := logLines(t, dir, "ops")
	if len(lines) != 1+2*posts {
		t.Fatalf("%d lines, want %d", len(lines), 1+2*posts)
	}
	for i := 1; i < len(lines); i++ {
		if lines[i].TS <= lines[i-1].TS {
			t.Fatalf("line %d has ts %s after %s", i, lines[i].TS, lines[i-1].TS)
		}
	}
	want := fmt.Sprintf(`[{"last_ts":%q,"messages":%d,"name":"ops"}]`, lines[len(lines)-1].TS, len(lines))
	for _, p := range []*plugintest.Tools{a, b} {
		if got := p.Call("chat.list_channels", map[string]any{}, ""); !sameJSON(got["channels"], want) {
			t.Fatalf("list_channels = %v, want %s", got["channels"], want)
		}
	}
}

// Review of issue 13 item 3: while one process's post hangs in the
// webhook, the other process lists channels and posts elsewhere (no shared
// lock is held across the webhook call), and a re-issue of the hanging
// post's key waits for it and answers its result instead of posting again.
func TestHangingWebhookStallsOnlyItsKey(t *testing.T) {
	entered, release := make(chan struct{}, 2), make(chan struct{})
	var mu sync.Mutex
	posted := map[string]int{}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Text string }
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		posted[body.Text]++
		mu.Unlock()
		if body.Text == "slow" {
			entered <- struct{}{}
			<-release
		}
	}))
	defer hook.Close()
	defer close(release) // before hook.Close: lets a stuck handler go on failure
	dir := t.TempDir()
	serve := func() *sdk.Server {
		tools, err := Tools(Config{DataDir: dir, WebhookURL: hook.URL})
		if err != nil {
			t.Fatal(err)
		}
		srv, err := sdk.NewServer(tools...)
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	a, b := serve(), serve()
	slow := map[string]any{"channel": "ops", "text": "slow"}
	aDone := call(a, "chat.post_message", slow, "run-1/a1")
	<-entered
	bKeyed := call(b, "chat.post_message", slow, "run-1/a1")
	for _, c := range []struct {
		tool    string
		payload map[string]any
	}{{"chat.list_channels", map[string]any{}}, {"chat.post_message", map[string]any{"channel": "dev", "text": "fast"}}} {
		select {
		case r := <-call(b, c.tool, c.payload, ""):
			if r.err != nil {
				t.Fatalf("b %s: %v", c.tool, r.err)
			}
		case r := <-aDone:
			t.Fatalf("a's hanging post ended (%v, %v) before b's %s did: b waited for a's webhook call", r.out, r.err, c.tool)
		case <-entered:
			t.Fatal("b posted a's key while a's post hangs")
		}
	}
	release <- struct{}{}
	first, again := <-aDone, <-bKeyed
	if first.err != nil || again.err != nil || again.out["ts"] != first.out["ts"] {
		t.Fatalf("a posted %v (%v); b re-issued its key: %v (%v)", first.out, first.err, again.out, again.err)
	}
	mu.Lock()
	defer mu.Unlock()
	if posted["slow"] != 1 || posted["fast"] != 1 || len(logLines(t, dir, "ops")) != 1 {
		t.Fatalf("webhook got %v, ops logged %d lines; want each text once", posted, len(logLines(t, dir, "ops")))
	}
}

type result struct {
	out map[string]any
	err error
}

// call runs tool on srv in a goroutine; the channel gets its result.
func call(srv *sdk.Server, tool string, payload map[string]any, key string) <-chan result {
	done := make(chan result, 1)
	go func() {
		data, _ := json.Marshal(payload)
		out, err := srv.Call(context.Background(), tool, data, key)
		var m map[string]any
		if err == nil {
			var v any
			v, err = contracts.DecodeJSON(out)
			m, _ = v.(map[string]any)
		}
		done <- result{m, err}
	}()
	return done
}

func sameJSON(v any, want string) bool {
	got, _ := json.Marshal(v)
	return string(got) == want
}
