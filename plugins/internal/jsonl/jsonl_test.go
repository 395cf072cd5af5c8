package jsonl

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

type rec struct {
	N int    `json:"n"`
	S string `json:"s"`
}

func TestAppendLoadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	recs, err := Load(path)
	if err != nil || len(recs) != 0 {
		t.Fatalf("Load(missing) = %v, %v; want none", recs, err)
	}
	for i := range 3 {
		if err := Append(path, rec{N: i, S: "line\nwith newline"}); err != nil {
			t.Fatal(err)
		}
	}
	recs, err = Load(path)
	if err != nil || len(recs) != 3 {
		t.Fatalf("Load = %d records, %v; want 3", len(recs), err)
	}
	if string(recs[2]) != `{"n":2,"s":"line\nwith newline"}` {
		t.Fatalf("record 2 = %s", recs[2])
	}
}

func TestLoadRepairsTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	if err := Append(path, rec{N: 1}); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"n":2,"s":"tor`)
	f.Close()
	recs, err := Load(path)
	if err != nil || len(recs) != 1 {
		t.Fatalf("Load = %d records, %v; want 1", len(recs), err)
	}
	if err := Append(path, rec{N: 3}); err != nil {
		t.Fatal(err)
	}
	recs, err = Load(path)
	if err != nil || len(recs) != 2 || string(recs[1]) != `{"n":3,"s":""}` {
		t.Fatalf("after repair and append: %q, %v", recs, err)
	}
}

func TestLoadRefusesCorruptLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	os.WriteFile(path, []byte("{\"n\":1}\nnot json\n{\"n\":2}\n"), 0o600)
	_, err := Load(path)
	if e := contracts.AsError(err); err == nil || e.Code != contracts.CodeInternal || e.Details["line"] != 2 {
		t.Fatalf("Load = %v, want CodeInternal naming line 2", err)
	}
	if data, _ := os.ReadFile(path); len(data) != len("{\"n\":1}\nnot json\n{\"n\":2}\n") {
		t.Fatal("Load changed a corrupt log")
	}
}

func TestLoadEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	os.WriteFile(path, nil, 0o600)
	if recs, err := Load(path); err != nil || len(recs) != 0 {
		t.Fatalf("Load(empty) = %v, %v", recs, err)
	}
}
