package jsonl

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzFollower: whatever a log holds, Next either refuses it or returns
// only valid JSON records, leaves the file ending in a complete line, and
// reads nothing twice. Seeds in testdata/fuzz/FuzzFollower.
func FuzzFollower(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "log.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		fl := Follow(path)
		recs, err := fl.Next()
		if err != nil {
			return
		}
		for _, r := range recs {
			if !json.Valid(r) {
				t.Fatalf("record %q is not JSON", r)
			}
		}
		after, _ := os.ReadFile(path)
		if len(after) > 0 && after[len(after)-1] != '\n' || !bytes.HasPrefix(data, after) {
			t.Fatalf("log %q became %q", data, after)
		}
		if again, err := fl.Next(); err != nil || len(again) != 0 {
			t.Fatalf("second Next = %q, %v", again, err)
		}
	})
}
