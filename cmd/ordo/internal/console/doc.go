// Package console is `ordo run`'s terminal face: a live progress display
// fed by engine events (the plan, each step's state and duration,
// interrupts) and the prompts that turn a person's typed answer into a
// contracts.Decision (approve, edit, reject, skip, answer).
//
// It reads and writes plain streams, not a terminal, so the same code
// serves a person at a keyboard and a test or script piping answers in.
package console
