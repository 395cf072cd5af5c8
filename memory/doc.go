// Package memory keeps what outlives a process: run checkpoints (in memory
// for tests, an embedded single-file store by default, Postgres when several
// servers share runs) and long-term pattern memory.
//
// This package holds what every run store shares, so that they behave as
// one: the Checkpointer, Leaser and Importer interfaces, the versioned JSON
// checkpoint codec with its upgrade registry (EncodeRun, DecodeRun), the
// argument checks and coded errors, and MemStore. The stores themselves live
// in memory/embedded and memory/postgres, one dependency each; the contract
// they all pass is memory/storetest.
package memory
