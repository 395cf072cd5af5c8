package idem

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

type effectLog struct {
	runs    int
	records []Record // what a plugin would have persisted
}

func (l *effectLog) effect(result any) func(Stamp) (Record, error) {
	return func(s Stamp) (Record, error) {
		l.runs++
		r, err := s.Record(result)
		if err == nil && s.Keyed() {
			l.records = append(l.records, r)
		}
		return r, err
	}
}

func TestSameKeyRunsOnceAndSurvivesRestart(t *testing.T) {
	var log effectLog
	payload := map[string]any{"n": json.Number("1"), "s": "x"}
	g := NewGuard(nil)
	first, err := g.Do("t.write", "k1", payload, log.effect(map[string]any{"id": "A", "n": 1}))
	if err != nil {
		t.Fatal(err)
	}
	again, err := g.Do("t.write", "k1", payload, log.effect(map[string]any{"id": "B"}))
	if err != nil {
		t.Fatal(err)
	}
	if log.runs != 1 {
		t.Fatalf("effect ran %d times, want 1", log.runs)
	}
	want := map[string]any{"id": "A", "n": json.Number("1")}
	if !jsonEqual(first, want) || !jsonEqual(again, want) {
		t.Fatalf("results %v and %v, want %v twice", first, again, want)
	}
	// A restarted plugin loads the persisted records into a new Guard.
	restarted := NewGuard(log.records)
	replay, err := restarted.Do("t.write", "k1", payload, log.effect(map[string]any{"id": "C"}))
	if err != nil || log.runs != 1 || !jsonEqual(replay, want) {
		t.Fatalf("after restart: %v, %v, runs %d", replay, err, log.runs)
	}
}

func TestKeysAreScopedAndEmptyKeyAlwaysRuns(t *testing.T) {
	var log effectLog
	g := NewGuard(nil)
	p := map[string]any{}
	for _, call := range []struct{ tool, key string }{{"a.x", "k"}, {"a.y", "k"}, {"a.x", ""}, {"a.x", ""}} {
		if _, err := g.Do(call.tool, call.key, p, log.effect("ok")); err != nil {
			t.Fatal(err)
		}
	}
	if log.runs != 4 {
		t.Fatalf("effect ran %d times, want 4 (keys scoped per tool; empty key never deduplicates)", log.runs)
	}
	if len(log.records) != 2 {
		t.Fatalf("%d records persisted, want 2 (only keyed calls)", len(log.records))
	}
}

func TestKeyReusedWithOtherPayloadIsRefused(t *testing.T) {
	var log effectLog
	g := NewGuard(nil)
	if _, err := g.Do("t.w", "k", map[string]any{"a": "1"}, log.effect(1)); err != nil {
		t.Fatal(err)
	}
	_, err := g.Do("t.w", "k", map[string]any{"a": "2"}, log.effect(2))
	e := contracts.AsError(err)
	if err == nil || e.Code != contracts.CodeToolFailed || e.Retryable || e.Details["field"] != "idempotency_key" {
		t.Fatalf("got %v, want a non-retryable tool error naming idempotency_key", err)
	}
	if log.runs != 1 {
		t.Fatalf("effect ran %d times", log.runs)
	}
}

func TestFailedEffectIsNotRemembered(t *testing.T) {
	g := NewGuard(nil)
	boom := errors.New("boom")
	if _, err := g.Do("t.w", "k", nil, func(Stamp) (Record, error) { return Record{}, boom }); !errors.Is(err, boom) {
		t.Fatalf("got %v, want boom", err)
	}
	var log effectLog
	if _, err := g.Do("t.w", "k", nil, log.effect("ok")); err != nil || log.runs != 1 {
		t.Fatalf("retry after failure: %v, runs %d", err, log.runs)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
