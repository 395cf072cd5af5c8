package toolerr

import (
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
