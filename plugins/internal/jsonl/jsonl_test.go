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
	f := Follow(path)
	recs, err := f.Next()
	if err != nil || len(recs) != 0 {
		t.Fatalf("Next(missing) = %v, %v; want none", recs, err)
	}
	for i := range 3 {
		if err := Append(path, rec{N: i, S: "line\nwith newline"}); err != nil {
			t.Fatal(err)
		}
	}
	recs, err = f.Next()
	if err != nil || len(recs) != 3 {
		t.Fatalf("Next = %d records, %v; want 3", len(recs), err)
	}
	if string(recs[2]) != `{"n":2,"s":"line\nwith newline"}` {
		t.Fatalf("record 2 = %s", recs[2])
	}
	// Another process appends; the follower sees only the new record.
	if err := Append(path, rec{N: 3}); err != nil {
		t.Fatal(err)
	}
	if recs, err = f.Next(); err != nil || len(recs) != 1 || string(recs[0]) != `{"n":3,"s":""}` {
		t.Fatalf("Next after one more append = %q, %v", recs, err)
	}
	if recs, err = f.Next(); err != nil || len(recs) != 0 {
		t.Fatalf("Next with nothing new = %q, %v", recs, err)
	}
}

func TestFollowerRefusesShrunkLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	Append(path, rec{N: 1})
	f := Follow(path)
	if _, err := f.Next(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, nil, 0o600)
	if _, err := f.Next(); contracts.CodeOf(err) != contracts.CodeInternal {
		t.Fatalf("Next after the log was emptied = %v, want CodeInternal", err)
	}
}

func TestNextRepairsTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	if err := Append(path, rec{N: 1}); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"n":2,"s":"tor`)
	f.Close()
	recs, err := Follow(path).Next()
	if err != nil || len(recs) != 1 {
		t.Fatalf("Next = %d records, %v; want 1", len(recs), err)
	}
	if err := Append(path, rec{N: 3}); err != nil {
		t.Fatal(err)
	}
	recs, err = Follow(path).Next()
	if err != nil || len(recs) != 2 || string(recs[1]) != `{"n":3,"s":""}` {
		t.Fatalf("after repair and append: %q, %v", recs, err)
	}
}

func TestNextRefusesCorruptLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	os.WriteFile(path, []byte("{\"n\":1}\nnot json\n{\"n\":2}\n"), 0o600)
	_, err := Follow(path).Next()
	if e := contracts.AsError(err); err == nil || e.Code != contracts.CodeInternal || e.Details["line"] != 2 {
		t.Fatalf("Next = %v, want CodeInternal naming line 2", err)
	}
	if data, _ := os.ReadFile(path); len(data) != len("{\"n\":1}\nnot json\n{\"n\":2}\n") {
		t.Fatal("Next changed a corrupt log")
	}
}

func TestNextEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	os.WriteFile(path, nil, 0o600)
	if recs, err := Follow(path).Next(); err != nil || len(recs) != 0 {
		t.Fatalf("Next(empty) = %v, %v", recs, err)
	}
}
