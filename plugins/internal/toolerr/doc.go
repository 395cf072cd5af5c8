// Package toolerr builds the tool errors the bundled plugins return, so a
// refused call looks the same in every plugin: a non-retryable
// contracts.CodeToolFailed error (sdk.ToolError) whose details name the
// payload field at fault, which the plugin protocol carries to the host.
package toolerr
