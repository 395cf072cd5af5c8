package recommender

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

func TestEvalOnFixture(t *testing.T) {
	rep, err := Eval(context.Background(), "testdata/tools.jsonl", "testdata/queries.jsonl", EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Tools != 5 || rep.All.Queries != 3 || rep.Single.Queries != 1 || rep.Multi.Queries != 2 {
		t.Fatalf("counts: %+v", rep)
	}
	if rep.All.R1 != 1 || rep.Multi.Full5 != 1 {
		t.Fatalf("fixture should be solved: R@1 %.2f, multi Full@5 %.2f", rep.All.R1, rep.Multi.Full5)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"R@1", "Full@10", "multi-tool", "p50"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.All != rep.All {
		t.Fatalf("JSON round trip: %v, %+v", err, back.All)
	}
}

func TestEvalMetricsCountMisses(t *testing.T) {
	var tl tally
	tl.add([]string{"x", "a", "b"}, []string{"a", "b"})           // first hit at rank 2, full within 5
	tl.add([]string{"x", "y", "z", "w", "v", "a"}, []string{"a"}) // hit at rank 6
	m := tl.metrics()
	if m.R1 != 0 || m.R5 != 0.5 || m.Full5 != 0.5 || m.Full10 != 1 || m.MRR10 != (0.5+1.0/6)/2 {
		t.Fatalf("metrics %+v", m)
	}
}

func TestEvalBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := dir + "/bad.jsonl"
	os.WriteFile(bad, []byte("{\"name\":\"a\"}\n{\"name\":\"a\"}\n"), 0o600)
	_, err := Eval(context.Background(), bad, "testdata/queries.jsonl", EvalOptions{})
	if e := contracts.AsError(err); e.Code != contracts.CodeInvalidInput || e.Details["line"] != 2 {
		t.Fatalf("duplicate tool: %v", err)
	}
	_, err = Eval(context.Background(), "testdata/tools.jsonl", dir+"/missing.jsonl", EvalOptions{})
	if contracts.CodeOf(err) != contracts.CodeInvalidInput {
		t.Fatalf("missing file: %v", err)
	}
	_, err = Eval(context.Background(), "testdata/tools.jsonl", "testdata/queries.jsonl", EvalOptions{Parts: 2, Part: 2})
	if e := contracts.AsError(err); e.Details["field"] != "part" {
		t.Fatalf("bad part: %v", err)
	}
}

func FuzzReadTools(f *testing.F) {
	seed, _ := os.ReadFile("testdata/tools.jsonl")
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := ReadTools(bytes.NewReader(data))
		if err != nil {
			if contracts.CodeOf(err) == contracts.CodeInternal {
				t.Fatalf("uncoded error: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, c := range cs {
			if strings.TrimSpace(c.Tool) == "" || seen[c.Tool] || len(c.InputSchema) == 0 {
				t.Fatalf("accepted a bad tool %+v", c)
			}
			seen[c.Tool] = true
		}
	})
}

func FuzzReadQueries(f *testing.F) {
	seed, _ := os.ReadFile("testdata/queries.jsonl")
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		qs, err := ReadQueries(bytes.NewReader(data))
		if err != nil {
			if contracts.CodeOf(err) == contracts.CodeInternal {
				t.Fatalf("uncoded error: %v", err)
			}
			return
		}
		for _, q := range qs {
			if strings.TrimSpace(q.Query) == "" || len(q.Tools) == 0 {
				t.Fatalf("accepted a bad query %+v", q)
			}
		}
	})
}
