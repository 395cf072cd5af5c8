package chat

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/ordo-run/ordo/plugins/internal/plugintest"
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

func sameJSON(v any, want string) bool {
	got, _ := json.Marshal(v)
	return string(got) == want
}
