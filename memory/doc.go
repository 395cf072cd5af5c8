// Package memory keeps what outlives a process: runs (in memory for tests,
// an embedded single-file store by default, Postgres when several servers
// share runs) and long-term pattern memory.
//
// A run is stored as an append-only log of entries (contracts.RunDelta),
// one per step boundary, with a snapshot now and then; see Checkpointer.
// This package holds what every run store shares, so that they behave as
// one: the Checkpointer, Leaser and Importer interfaces, the versioned JSON
// codec of runs and entries with its upgrade registry (EncodeRun,
// DecodeRun, NewEntry, DecodeEntry, NeedSnapshot), the argument
// checks and coded errors, and MemStore. The stores themselves live in
// memory/embedded and memory/postgres, one dependency each; the contract
// they all pass is memory/storetest.
package memory
