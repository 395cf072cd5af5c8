// Package interop holds Ordo's interoperability tests: third-party MCP
// clients (the official TypeScript SDK) and the official MCP conformance
// suite run against the real `ordo serve` binary over stdio and streamable
// HTTP. It has no code of its own beyond the tests and the bearer-token
// proxy the conformance suite needs (cmd/bearerproxy), because what it
// checks is the built product as other people's software sees it.
package interop
