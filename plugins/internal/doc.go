// Package internal holds what the bundled plugins share, one small package
// per job: safepath (paths that cannot leave a root), atomicfile (replace a
// file so a crash leaves the old or the new version), jsonl (durable
// append-only logs), idem (idempotency keys whose results survive restarts)
// and plugenv (environment-derived directories). Keeping them here means
// files and sheets refuse escapes with the same code, and every
// side-effecting tool honours idempotency keys the same way.
package internal
