package toolerr

import (
	"errors"
	"io/fs"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// Refuse reports a call that can never succeed as given, because of payload
// field field. It is not retryable; details carry "field".
func Refuse(field, format string, args ...any) *contracts.Error {
	return contracts.AsError(sdk.ToolError(false, format, args...)).With("field", field)
}

// Transient reports a failure that repeating the same call may cure (a busy
// or unreachable backend).
func Transient(format string, args ...any) *contracts.Error {
	return contracts.AsError(sdk.ToolError(true, format, args...))
}

// Failed reports a failure of the tool's own setup or backend that
// repeating the call will not cure (e.g. a webhook that answers 404).
func Failed(format string, args ...any) *contracts.Error {
	return contracts.AsError(sdk.ToolError(false, format, args...))
}

// FromOS refuses a call whose payload path (field, as given: name) met an
// I/O error: a missing file, a permission, a symlink the root will not
// follow. None of these cure themselves, so none is retryable. The error
// keeps the payload's path, never the absolute one on this machine.
func FromOS(field, name string, err error) *contracts.Error {
	if errors.Is(err, fs.ErrNotExist) {
		return Refuse(field, "%s %q does not exist", field, name).With("path", name)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return Refuse(field, "%s %q: %w", field, name, err).With("path", name)
}
