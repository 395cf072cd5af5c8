package host

import (
	"errors"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// isolate starts the plugin in a process group of its own, so that
// killGroup stops whatever it started with it, and makes the kernel kill it
// if Ordo dies, even by SIGKILL, so plugins never outlive the host.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills what is left of the process group a plugin led (see
// isolate): the children it started, which would otherwise outlive it.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// processGone reports whether no process pid exists any more (it exited
// and was reaped), so a call now cannot reach it.
func processGone(pid int) bool {
	return pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// watchExit returns a func that reports whether process pid has exited,
// without a system call: the kernel makes a pidfd readable when its
// process exits (before it is reaped), and the runtime's poller wakes a
// goroutine that waits for that and marks it. Asking the kernel on every
// plugin call (processGone) cost a system call, over a microsecond here,
// on every call (issue 14). Where a pidfd cannot be waited on (Linux before
// 5.10), the func asks the kernel each time, as before.
func watchExit(pid int) func() bool {
	if pid <= 0 {
		return func() bool { return false }
	}
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if errors.Is(err, unix.ESRCH) {
		return func() bool { return true }
	}
	if err != nil {
		return func() bool { return processGone(pid) }
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return func() bool { return processGone(pid) }
	}
	var exited, unwatched atomic.Bool
	go func() {
		defer f.Close()
		waited := false
		// The first call of the func finds the pidfd not yet known
		// readable and waits; the second comes once the process exited.
		err := rc.Read(func(uintptr) bool {
			done := waited
			waited = true
			return done
		})
		if err != nil { // not pollable: ask the kernel on each call
			unwatched.Store(true)
			return
		}
		exited.Store(true)
	}()
	return func() bool { return exited.Load() || unwatched.Load() && processGone(pid) }
}
