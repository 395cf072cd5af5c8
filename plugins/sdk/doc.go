// Package sdk is what a plugin author imports: declare tools (a contract
// and a handler each) and call Serve. The SDK checks every contract, checks
// each payload against the input schema before the handler runs and each
// result against the output schema after, turns handler panics into tool
// errors, and speaks the go-plugin gRPC protocol of package proto.
//
// Server is the protocol-free core (Describe and Call); the gRPC service
// and the host's in-process provider both call it, so a tool behaves the
// same in a plugin process and inside Ordo.
package sdk
