// Package jsonl keeps durable append-only logs of JSON records, one per
// line. Append fsyncs before returning, so an acknowledged record survives a
// crash; a Follower reads what was appended since it last looked (other
// processes' records included), repairs the one kind of damage a crash can
// cause (a torn last line) and refuses any other, so a corrupted log is
// never silently rewritten. The chat outbox and the files plugin's
// idempotency journal use it.
package jsonl
