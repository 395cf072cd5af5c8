// Package filelock serialises a plugin's changes across processes: several
// Ordo servers (each running its own copy of a plugin) may share one plugin
// data directory, and a change must then read the state the others
// committed and write without losing theirs. A Mutex is an in-process mutex
// plus flock(2) on a lock file beside the state; the kernel drops the flock
// when its holder dies, SIGKILL included, so a crash never leaves it held.
package filelock
