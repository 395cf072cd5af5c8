// Package cli is the ordo command line: the cobra command tree (run,
// serve, runs, tools, plugins, migrate, version), the mapping from how a
// command ended to its exit code, and the loop that drives a run in the
// terminal through its interrupts.
//
// It owns no domain logic: configuration comes from config, the assembled
// pieces from app, the terminal face from console; Main returns an exit
// code instead of exiting so tests and main share one path.
package cli
