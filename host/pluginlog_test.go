package host

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// TestPluginLogLevels: what go-plugin logs about a plugin, and the lines
// it parses from the plugin's stderr, reach slog at their own level with
// the plugin's name and their fields, not wrapped in an INFO line.
func TestPluginLogLevels(t *testing.T) {
	var buf bytes.Buffer
	l := pluginLogger(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), "sheets")
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
}
