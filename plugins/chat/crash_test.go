package chat_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ordo-run/ordo/host/hosttest"
)

// Issue 13 item 2: the plugin is SIGKILLed after the message's line is
// durable and before the reply; the restarted plugin, given the same key,
// answers with that message and posts nothing more.
func TestCrashAfterPostIsExactlyOnce(t *testing.T) {
	bin := hosttest.Build(t, "chat")
	ordo := t.TempDir()
	msg := map[string]any{"channel": "ops", "text": "page ready"}
	hosttest.Crash(t, bin, "chat", ordo, nil, "chat.post_message/effect", 1, "chat.post_message", msg, "run-1/a4")
	p := hosttest.Start(t, bin, "chat", ordo, nil)
	first := p.Call("chat.post_message", msg, "run-1/a4")
	if again := p.Call("chat.post_message", msg, "run-1/a4"); again["ts"] != first["ts"] {
		t.Fatalf("repeat answered %v, first %v", again, first)
	}
	data, err := os.ReadFile(filepath.Join(p.DataDir, "channels", "ops.jsonl"))
	if n := bytes.Count(data, []byte("\n")); err != nil || n != 1 {
		t.Fatalf("outbox holds %d lines (%v)", n, err)
	}
}
