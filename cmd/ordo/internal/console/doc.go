// Package console is `ordo run`'s terminal face: a live progress display
// fed by engine events (the plan, each step's state and duration,
// interrupts) and the prompts that turn a person's typed answer into a
// contracts.Decision (approve, edit, reject, skip, answer).
//
// It reads and writes plain streams, so the same code serves a person at
// a keyboard and a test or script piping answers in. Only the spinner
// shown during a model call needs a terminal, and the caller says whether
// it has one.
package console
