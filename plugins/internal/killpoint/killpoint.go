package killpoint

import (
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// Environment variables that arm a kill point.
const (
	// PointEnv names the point, "<tool>/<stage>" (e.g. files.write/effect).
	PointEnv = "ORDO_KILLPOINT"
	// HitEnv is which arrival at the point dies (1 = the first; default 1).
	HitEnv = "ORDO_KILLPOINT_HIT"
	// TargetEnv is "plugin" (default: the plugin dies, its host lives) or
	// "ordo" (the host process dies first, then the plugin: both lose
	// everything they did not persist).
	TargetEnv = "ORDO_KILLPOINT_TARGET"
	// DelayEnv, a Go duration, makes the armed arrival start a timer and
	// go on: the kill lands that long after the point, wherever the tool
	// (or the next one) then is, inside a write or an fsync included.
	DelayEnv = "ORDO_KILLPOINT_DELAY"
	// OnceEnv, a file path, makes the kill happen once across restarts:
	// the armed arrival dies only if it can create that file, so a plugin
	// its host restarted (same environment, arrivals counted anew) lives.
	OnceEnv = "ORDO_KILLPOINT_ONCE"
)

var (
	point  = os.Getenv(PointEnv)
	hit    = hitFromEnv()
	ordo   = os.Getenv(TargetEnv) == "ordo"
	delay  = delayFromEnv()
	once   = os.Getenv(OnceEnv)
	passed atomic.Int64
)

func hitFromEnv() int64 {
	n, err := strconv.ParseInt(os.Getenv(HitEnv), 10, 64)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

func delayFromEnv() time.Duration {
	d, _ := time.ParseDuration(os.Getenv(DelayEnv))
	return d
}

// Here kills the process (and, when the target is ordo, its parent first)
// if name is the armed point and this is the armed arrival at it. An
// empty name is no point.
func Here(name string) {
	if name == "" || name != point || passed.Add(1) != hit || !first() {
		return
	}
	if delay > 0 {
		time.AfterFunc(delay, die)
		return
	}
	die()
}

// first reports whether this is the first process to die here: without
// OnceEnv always; with it, whether this process created the marker file.
func first() bool {
	if once == "" {
		return true
	}
	f, err := os.OpenFile(once, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return false
	}
	_ = f.Close() // the marker exists: that is all it says
	return true
}

func die() {
	if ordo {
		kill(os.Getppid())
	}
	kill(os.Getpid())
	select {} // the signal is on its way; run nothing more
}

// kill sends SIGKILL (on Windows, TerminateProcess) to pid.
func kill(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
