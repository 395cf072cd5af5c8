// Package testbuild builds Ordo's real binaries for tests that run them as
// a user or an MCP client would (cmd/ordo, interop): ordo with the bundled
// plugins beside it, where ordo looks for them, built once per test binary
// by the same code so the suites cannot drift apart. Only tests import it.
package testbuild
