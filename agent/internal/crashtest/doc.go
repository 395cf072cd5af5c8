// Command crashtest is the process the durability tests kill: an Ordo
// engine over a real run store (an embedded file or Postgres) and a real
// host running the bundled notes and chat plugin binaries, driving plans
// whose side effects the plugins record (note pages and blocks, chat
// outbox lines), each under its step's idempotency key.
//
// Modes:
//
//	start    plan and run -runs runs of the durable plan at once
//	recover  claim runs whose owner died (Engine.Recover) until no run is unfinished
//
// It prints one JSON line per engine event on stdout, then "done". With
// ORDO_CRASH_AFTER_SAVES=N it SIGKILLs itself ORDO_CRASH_DELAY (default 0)
// after its Nth successful checkpoint: a seeded, repeatable kill -9 point.
package main
