// Package idem makes side-effecting tools honour idempotency keys: the first
// call with a key does the work and records its result; a repeat with the
// same key returns that result and does nothing, even after the plugin
// restarts. A Guard holds the records in memory; where they persist is the
// plugin's choice, ideally in the same write as the side effect (the notes
// store file, the chat outbox line), so a crash cannot keep one without the
// other.
package idem
