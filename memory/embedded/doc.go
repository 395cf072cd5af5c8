// Package embedded is the default run store: one SQLite file under the data
// directory, pure Go (modernc.org/sqlite, no cgo), so `ordo serve` needs no
// setup. SQLite's write-ahead log makes every checkpoint atomic: a process
// killed mid-write leaves the earlier checkpoints intact.
package embedded
