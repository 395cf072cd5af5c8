package toolerr

import (
	"errors"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// Refuse reports a call that can never succeed as given, because of payload
// field field. It is not retryable; details carry "field".
func Refuse(field, format string, args ...any) *contracts.Error {
	return bounded(sdk.ToolError(false, format, args...)).With("field", field)
}

// Transient reports a failure that repeating the same call may cure (a busy
// or unreachable backend).
func Transient(format string, args ...any) *contracts.Error {
	return bounded(sdk.ToolError(true, format, args...))
}

// Failed reports a failure of the tool's own setup or backend that
// repeating the call will not cure (e.g. a webhook that answers 404).
func Failed(format string, args ...any) *contracts.Error {
	return bounded(sdk.ToolError(false, format, args...))
}

// FromOS refuses a call whose payload path (field, as given: name) met an
// I/O error: a missing file, a permission, a symlink the root will not
// follow. None of these cure themselves, so none is retryable. The error
// keeps the payload's path, never the absolute one on this machine.
func FromOS(field, name string, err error) *contracts.Error {
	if errors.Is(err, fs.ErrNotExist) {
		return Refuse(field, "%s %q does not exist", field, name).With("path", Shown(name))
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return Refuse(field, "%s %q: %w", field, name, err).With("path", Shown(name))
}

// MaxMessage bounds a tool error's message, and MaxShown a payload value
// in its details: an error quoting what the plan sent (a page id of 3 MB,
// 18 MB once %q escaped it) passed what the host takes from a plugin, so
// the call failed with a gRPC size error and the run store kept the rest.
const (
	MaxMessage = 1000
	MaxShown   = 200
)

// bounded is err (a contracts error) with its message cut to MaxMessage.
func bounded(err error) *contracts.Error {
	e := contracts.AsError(err)
	if len(e.Message) > MaxMessage {
		e.Message = cut(e.Message, MaxMessage)
	}
	return e
}

// Shown is a payload value as an error's details may show it: at most
// MaxShown bytes.
func Shown(s string) string {
	if len(s) <= MaxShown {
		return s
	}
	return cut(s, MaxShown)
}

// cut is s in at most n bytes and "…", not splitting a character.
func cut(s string, n int) string {
	n -= len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
