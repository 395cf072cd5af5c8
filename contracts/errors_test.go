package contracts

import (
	"errors"
	"io"
	"reflect"
	"sync"
	"testing"
)

// An error is a value: With and WithDetails give a new error and leave the
// one they were called on, and any copy sharing its details, unchanged.
func TestWithLeavesTheOriginalUnchanged(t *testing.T) {
	base := Errorf(CodeToolFailed, "read: %w", io.EOF).With("tool", "files.read")
	base.Retryable = true
	shared := *base // a plain copy shares base's Details map

	more := base.With("attempts", 3).With("tool", "files.write")
	if want := map[string]any{"tool": "files.read"}; !reflect.DeepEqual(base.Details, want) || !reflect.DeepEqual(shared.Details, want) {
		t.Fatalf("With changed the original: %v, copy %v", base.Details, shared.Details)
	}
	if want := map[string]any{"tool": "files.write", "attempts": 3}; !reflect.DeepEqual(more.Details, want) {
		t.Fatalf("details %v, want %v", more.Details, want)
	}
	if more == base || more.Code != base.Code || more.Message != base.Message || !more.Retryable || !errors.Is(more, io.EOF) {
		t.Fatalf("the copy lost the code, message, retryable flag or cause: %+v", more)
	}

	from := Errorf(CodePlanFailed, "no plan").WithDetails(more.Details)
	if !reflect.DeepEqual(from.Details, more.Details) || from.Retryable {
		t.Fatalf("WithDetails: %+v", from)
	}
	from.Details["tool"] = "changed"
	if more.Details["tool"] != "files.write" {
		t.Fatal("WithDetails shares the map it was given")
	}

	// Many goroutines adding details to one error race on nothing (go test -race).
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { _ = base.With("worker", i) })
	}
	wg.Wait()
	if len(base.Details) != 1 {
		t.Fatalf("concurrent With changed the original: %v", base.Details)
	}
}
