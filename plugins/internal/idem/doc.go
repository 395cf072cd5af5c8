// Package idem makes side-effecting tools honour idempotency keys: the first
// call with a key does the work and records its result; a repeat with the
// same key returns that result and does nothing, even after the plugin
// restarts and from another process sharing its data directory. A Guard
// holds the records in memory; where they persist is the plugin's choice,
// ideally in the same write as the side effect (the notes store file, the
// chat outbox line), so a crash cannot keep one without the other. Where
// that cannot be (files: the effect is in the user's tree), the plugin
// journals an intent first, so a re-issued call can tell whether the cut
// off effect happened.
package idem
