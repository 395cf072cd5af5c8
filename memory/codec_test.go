package memory_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/storetest"
)

func TestDecodeUpgradesV0(t *testing.T) {
	run, err := memory.DecodeRun(storetest.RunV0, 0)
	if err != nil {
		t.Fatal(err)
	}
	storetest.RequireUpgradedV0(t, run)
}

func TestDecodeRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		data    string
		version int
	}{
		"future version":      {`{"id":"a"}`, contracts.RunFormatVersion + 1},
		"negative version":    {`{"id":"a"}`, -1},
		"not json":            {`{"id":`, contracts.RunFormatVersion},
		"not json, old":       {`{"run_id":`, 0},
		"not an object, old":  {`[1,2]`, 0},
		"null, old":           {`null`, 0},
		"wrong type":          {`{"id":"a","seq":"one"}`, contracts.RunFormatVersion},
		"plan and plans, old": {`{"run_id":"a","plan":{},"plans":[]}`, 0},
	} {
		_, err := memory.DecodeRun([]byte(tc.data), tc.version)
		if contracts.CodeOf(err) != contracts.CodeCheckpointFormat {
			t.Errorf("%s: got %v, want code %d", name, err, contracts.CodeCheckpointFormat)
		}
	}
}

func TestEncodeWritesCurrentVersion(t *testing.T) {
	run := storetest.FullRun("enc", 3)
	run.FormatVersion = 0
	data, err := memory.EncodeRun(run)
	if err != nil {
		t.Fatal(err)
	}
	if run.FormatVersion != 0 {
		t.Fatal("EncodeRun changed its argument")
	}
	got, err := memory.DecodeRun(data, contracts.RunFormatVersion)
	if err != nil {
		t.Fatal(err)
	}
	run.FormatVersion = contracts.RunFormatVersion
	if !reflect.DeepEqual(storetest.Canonical(t, run), storetest.Canonical(t, got)) {
		t.Fatal("encode/decode lost data")
	}
}

// FuzzDecodeRun feeds arbitrary checkpoints of every readable version: no
// input may panic, and whatever decodes must survive re-encoding unchanged.
func FuzzDecodeRun(f *testing.F) {
	f.Add(storetest.RunV0, 0)
	cur, _ := memory.EncodeRun(storetest.FullRun("fuzz", 1))
	f.Add(cur, contracts.RunFormatVersion)
	f.Fuzz(func(t *testing.T, data []byte, version int) {
		run, err := memory.DecodeRun(data, version)
		if err != nil {
			if contracts.CodeOf(err) != contracts.CodeCheckpointFormat {
				t.Fatalf("uncoded refusal: %v", err)
			}
			return
		}
		again, err := memory.EncodeRun(run)
		if err != nil {
			t.Fatal(err)
		}
		back, err := memory.DecodeRun(again, contracts.RunFormatVersion)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if !reflect.DeepEqual(storetest.Canonical(t, run), storetest.Canonical(t, back)) {
			t.Fatal("round trip changed the run")
		}
		// A new run's entry wraps its checkpoint exactly as WholeEntry does.
		run.Seq = 1
		e, err := memory.NewEntry(run)
		if err != nil {
			t.Fatal(err)
		}
		want, err := memory.WholeEntry(e.Snap, 1, run.UpdatedAt)
		if err != nil || !bytes.Equal(e.Data, want) {
			t.Fatalf("whole entry\n%s\nwant\n%s (%v)", e.Data, want, err)
		}
	})
}
