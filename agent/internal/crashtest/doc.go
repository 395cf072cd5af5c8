// Command crashtest is the process the durability tests kill: an Ordo
// engine over a real run store (an embedded file or Postgres) and a real
// host running the bundled notes, chat and files plugin binaries, driving
// plans whose side effects the plugins record (note pages and blocks, chat
// outbox lines, files), each under its step's idempotency key. It approves
// every interrupt (policy confirms files.delete).
//
// Modes:
//
//	start    plan and run -runs runs of the durable plan at once
//	recover  claim runs whose owner died (Engine.Recover) until no run is unfinished
//
// It prints one JSON line per engine event on stdout, then "done". With
// ORDO_CRASH_AFTER_SAVES=N it SIGKILLs itself ORDO_CRASH_DELAY (default 0)
// after its Nth successful checkpoint: a seeded, repeatable kill -9 point.
// ORDO_KILLPOINT* variables are passed to the plugins, which then SIGKILL
// themselves, or this process and themselves, at a named instant inside a
// tool (plugins/internal/killpoint).
package main
