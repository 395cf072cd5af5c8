package embedded_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory/embedded"
	"github.com/ordo-run/ordo/memory/storetest"
)

// A payload redacted by the engine leaves no trace of its secret in the
// store's files (database and write-ahead log).
func TestRedactedSecretNotStored(t *testing.T) {
	dir := t.TempDir()
	s, err := embedded.Open(filepath.Join(dir, "ordo.db"))
	if err != nil {
		t.Fatal(err)
	}
	const secret = "sk-live-9f8e7d6c"
	payload := contracts.Redact(json.RawMessage(`{"to":"ana","api_key":"`+secret+`"}`), []string{"api_key"}).(json.RawMessage)
	run := storetest.SimpleRun("sec", "u", contracts.RunRunning, 1, storetest.Base)
	run.Steps = []contracts.StepRecord{{ActionID: "a", Tool: "mail.send", Payload: payload, Status: contracts.StepStarted}}
	if err := s.Save(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "ordo.db*"))
	if len(files) < 2 {
		t.Fatalf("expected the database and its WAL, found %v", files)
	}
	found := false
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(secret)) {
			t.Fatalf("secret found in %s", f)
		}
		found = found || bytes.Contains(data, []byte(contracts.Redacted))
	}
	if !found {
		t.Fatal("the redacted step is not in the files either: the test looked in the wrong place")
	}
	s.Close()
}
