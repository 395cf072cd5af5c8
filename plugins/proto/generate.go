// Package proto holds the Ordo plugin protocol (ordo_plugin.proto) and its
// generated Go code, checked in so that building Ordo needs no protoc.
//
// Regenerate from the repository root with `make proto`, or here with
// `go generate`.
package proto

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative ordo_plugin.proto
