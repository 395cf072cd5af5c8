package patterns

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// FuzzDecodeRecord: stored records come back from files on disk; damaged
// ones are refused with a coded error, never a panic, and accepted ones
// survive a round trip.
func FuzzDecodeRecord(f *testing.F) {
	f.Add(`{"id":"x","namespace":"tool","user":"ann","text":"read","tool":"crm.read","successes":2,"failures":3,"should_avoid":true}`)
	f.Add(`{"id":"p","namespace":"plan","plan":{"version":"1.0","goal":"g","timezone":"UTC","actions":[]}}`)
	f.Add(`{"id":"c","namespace":"clarification","answers":{"q":[1,{"a":null}]},"reuse_count":-1}`)
	f.Add(`{"id":"w","namespace":"workflow"}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, raw string) {
		r, err := decodeRecord(raw)
		if err != nil {
			if contracts.CodeOf(err) != contracts.CodeStore {
				t.Fatalf("uncoded refusal: %v", err)
			}
			return
		}
		if r.Samples() < 0 || r.SuccessRate() < 0 || r.SuccessRate() > 1 || r.Confidence() > 1 {
			t.Fatalf("accepted record has impossible figures: %+v", r)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := decodeRecord(string(b))
		if err != nil || r2.ID != r.ID || r2.Samples() != r.Samples() {
			t.Fatalf("round trip: %+v %v", r2, err)
		}
	})
}

// FuzzParseNamespace: whatever a user types, a known namespace or a coded
// error naming the field.
func FuzzParseNamespace(f *testing.F) {
	for _, s := range []string{"plan", " Tools ", "all", "", "workflows", "behaviour", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, err := ParseNamespace(s)
		switch {
		case err != nil:
			if ce := contracts.AsError(err); ce.Code != contracts.CodeInvalidInput || ce.Details["field"] != "namespace" {
				t.Fatalf("bad refusal %v", err)
			}
		case ns != "" && !knownNamespace(ns):
			t.Fatalf("parsed to unknown %q", ns)
		}
	})
}

// FuzzCollect: any run a store could hand back is either refused with a
// coded error or consolidated into records that read back and add up.
func FuzzCollect(f *testing.F) {
	f.Add([]byte(`{"user_id":"ann","goal":"send the report","status":"completed","plans":[{"version":1,"plan":{"actions":[{"id":"a1","tool":"chat.post","intent":"post"}]}}],"steps":[{"action_id":"a1","tool":"chat.post","plan_version":1,"status":"succeeded","started_at":"2026-01-01T00:00:00Z","ended_at":"2026-01-01T00:00:01Z"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var run contracts.Run
		if json.Unmarshal(data, &run) != nil {
			return
		}
		obs := observe(&run)
		finished := 0
		for _, s := range run.Steps {
			if s.Tool != "" && !s.EndedAt.IsZero() && (s.Status == contracts.StepSucceeded || s.Status == contracts.StepFailed) {
				finished++
			}
		}
		toolSamples := 0
		for _, r := range obs {
			if !knownNamespace(r.Namespace) || r.Samples() < 0 || math.IsNaN(r.MeanDurationMS) || r.MeanDurationMS < 0 {
				t.Fatalf("bad observation %+v", r)
			}
			if r.Namespace == NSTool {
				toolSamples += r.Samples()
			}
		}
		if toolSamples != finished {
			t.Fatalf("%d tool samples for %d finished attempts", toolSamples, finished)
		}
		m, err := Open("", nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Collect(context.Background(), &run); err != nil {
			if contracts.CodeOf(err) != contracts.CodeInvalidInput {
				t.Fatalf("collect: %v", err)
			}
			return
		}
		rs, err := m.List(context.Background(), run.UserID, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.User != run.UserID || r.ID == "" {
				t.Fatalf("stored %+v for user %q", r, run.UserID)
			}
		}
	})
}
