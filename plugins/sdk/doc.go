// Package sdk is what a plugin author imports: declare tools (a contract
// and a handler each) and call Serve. The SDK checks every contract, turns
// handler panics into tool errors, and speaks the go-plugin gRPC protocol
// of package proto. Payloads and results are checked against the tools'
// schemas once, by the Ordo host, which is where a plugin's results are
// trusted or refused: the host checks each payload before it sends it and
// each result after it returns, so a handler only ever sees a payload that
// passed its input schema.
//
// Server is the protocol-free core (Describe, Run and Call); the gRPC
// service and the host's in-process provider both call Run, so a tool
// behaves the same in a plugin process and inside Ordo. Call also checks
// both schemas, for callers without a host (a plugin's own tests).
package sdk
