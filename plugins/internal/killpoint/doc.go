// Package killpoint lets the crash tests SIGKILL a plugin, or the Ordo
// process that runs it, at a named instant inside a side effect: after an
// intent is journaled, after a temporary file is durable, after the commit
// and before the reply. The instants are deterministic (the Nth time a
// named point is reached), so a seeded test can aim at each of them, where
// a timer would land wherever the scheduler happens to be. ORDO_KILLPOINT_ONCE
// limits the kill to one process, so a restarted plugin can finish the call.
//
// It is armed only by environment variables the host passes to the plugin
// (a plugin spec's env); unarmed, Here costs one comparison.
package killpoint
