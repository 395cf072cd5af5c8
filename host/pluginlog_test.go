package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/syncbuf"
	"github.com/ordo-run/ordo/internal/testwait"
)

// TestPluginLogLevels: what go-plugin logs about a plugin, and the lines
// it parses from the plugin's stderr, reach slog at their own level with
// the plugin's name and their fields, not wrapped in an INFO line.
func TestPluginLogLevels(t *testing.T) {
	var buf bytes.Buffer
	l := pluginLogger(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), "sheets", contracts.Concealer{})
	named := l.Named("ordo-plugin-sheets").With("pid", 42)
	named.Warn("row limit reached", "file", "big.csv")
	named.Error("cannot open", "err", "denied")
	named.Debug("starting")
	named.Trace("hidden below debug")
	var got []map[string]any
	for line := range strings.Lines(buf.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		got = append(got, rec)
	}
	want := []struct{ level, msg string }{{"WARN", "row limit reached"}, {"ERROR", "cannot open"}, {"DEBUG", "starting"}}
	if len(got) != len(want) {
		t.Fatalf("records: %s", buf.String())
	}
	for i, w := range want {
		r := got[i]
		if r["level"] != w.level || r["msg"] != w.msg || r["plugin"] != "sheets" || r["pid"] != float64(42) {
			t.Errorf("record %d: %v, want %s %q", i, r, w.level, w.msg)
		}
	}
	if got[0]["file"] != "big.csv" || got[1]["err"] != "denied" {
		t.Errorf("fields lost: %v", got)
	}
	// go-plugin names the binary's path "plugin": it must not shadow the
	// plugin's name.
	buf.Reset()
	l.Error("plugin process exited", "plugin", "/opt/ordo-plugin-sheets", "id", 42)
	if line := buf.String(); strings.Count(line, `"plugin":`) != 1 || !strings.Contains(line, `"plugin":"sheets"`) ||
		!strings.Contains(line, `"path":"/opt/ordo-plugin-sheets"`) {
		t.Errorf("go-plugin's exit line: %s", line)
	}
}

// TestPluginLogFloodBounded: a plugin that writes error lines to its
// stderr as fast as it can gets a burst of them into Ordo's log, then
// pluginLogRate a second; the rest are dropped, which is logged once, and
// their count is logged (at most once a second) when its lines flow again.
func TestPluginLogFloodBounded(t *testing.T) {
	var buf bytes.Buffer
	l := pluginLogger(slog.New(slog.NewJSONHandler(&buf, nil)), "noisy", contracts.Concealer{}).Named("ordo-plugin-noisy")
	start := time.Now()
	const lines = 20_000
	for i := range lines {
		l.Error("flood", "i", i)
	}
	elapsed := time.Since(start)
	l.Debug("below the level: not counted against the plugin, nor logged")
	recs, throttled := 0, 0
	for line := range strings.Lines(buf.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if rec["msg"] == "flood" {
			recs++
		} else if rec["plugin"] == "noisy" && strings.Contains(rec["msg"].(string), "dropping") {
			throttled++
		}
	}
	if bound := pluginLogBurst + int(elapsed.Seconds()*pluginLogRate) + 1; recs > bound || throttled != 1 {
		t.Fatalf("%d of %d lines logged in %s (at most %d), %d throttle notices", recs, lines, elapsed, bound, throttled)
	}
	time.Sleep(time.Second + time.Second/pluginLogRate) // a token back, and the count due
	buf.Reset()
	l.Error("after the flood")
	if !strings.Contains(buf.String(), `"dropped":`) || !strings.Contains(buf.String(), "after the flood") {
		t.Fatalf("after the flood: %s", buf.String())
	}
}

// A plugin that says what its configured env holds on its stderr ("using
// key …") has the value hidden in Ordo's log: the env values are secrets
// (config show hides them too). The plugin writes the key in two writes;
// on a line longer than go-plugin reads at once (which it logs in chunks)
// the key straddles the first chunk's end.
func TestPluginStderrHidesEnvValues(t *testing.T) {
	const secret = "plugin-env-s3cret"
	for name, pad := range map[string]int{"short line": 0, "long line": pluginLineMax - len("using key ") - len(secret)/2} {
		t.Run(name, func(t *testing.T) {
			var logs syncbuf.Buffer
			h := newHost(t, WithLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			if err := h.AddPlugin(context.Background(), PluginSpec{Name: "talky", Path: roguePluginBin,
				Env: map[string]string{"ROGUE_MODE": "say", "ROGUE_KEY": secret, "ROGUE_SERVICE": "talky", "ROGUE_PAD": strconv.Itoa(pad)}}); err != nil {
				t.Fatal(err)
			}
			testwait.For(t, 10*time.Second, func() error {
				if l := logs.String(); !strings.Contains(l, contracts.Redacted) && !strings.Contains(l, secret[len(secret)/2:]) {
					return errors.New("the end of the plugin's line is not in the log")
				}
				return nil
			})
			l := logs.String()
			for _, part := range []string{secret, secret[:len(secret)/2], secret[len(secret)/2:]} {
				if i := strings.Index(l, part); i >= 0 {
					t.Fatalf("%q is in the log: …%s…", part, l[max(i-200, 0):min(i+200, len(l))])
				}
			}
		})
	}
}
