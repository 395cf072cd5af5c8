// Package testerr checks coded errors (contracts.Error) in tests, one way
// everywhere. contracts' own tests keep a copy: they cannot import a
// package that imports contracts. Only tests import it.
package testerr

import (
	"errors"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// Code fails tb unless err is, or wraps, a coded error with code, and
// returns it.
func Code(tb testing.TB, err error, code contracts.Code) *contracts.Error {
	tb.Helper()
	var e *contracts.Error
	if !errors.As(err, &e) || e.Code != code {
		tb.Fatalf("got %v, want code %d", err, code)
	}
	return e
}

// Field is Code that also requires the error's "field" detail to name
// field, as refusals of bad input do.
func Field(tb testing.TB, err error, code contracts.Code, field string) *contracts.Error {
	tb.Helper()
	e := Code(tb, err, code)
	if e.Details["field"] != field {
		tb.Fatalf("got details %v, want field %q (%v)", e.Details, field, err)
	}
	return e
}
