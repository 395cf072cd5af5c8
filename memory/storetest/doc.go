// Package storetest is the contract every run store must keep, as a test
// suite each store runs against itself (in memory, embedded, Postgres), so
// the engine can rely on one behaviour whichever store is configured.
package storetest
