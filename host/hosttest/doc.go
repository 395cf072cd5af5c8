// Package hosttest runs a bundled plugin the way Ordo does, for the plugins'
// integration tests: it builds the real cmd/ordo-plugin-NAME binary, starts
// it under a real host (go-plugin over gRPC, AutoMTLS, checksum pinning) and
// calls its tools through host.Call, so contracts, errors and idempotency
// keys cross the actual process boundary. It sits above host (like
// net/http/httptest above net/http) so that no package under plugins
// imports host; only tests import it.
package hosttest
