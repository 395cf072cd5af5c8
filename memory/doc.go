// Package memory keeps what outlives a process: run checkpoints (in memory
// for tests, an embedded single-file store by default, Postgres when several
// servers share runs) and long-term pattern memory.
package memory
