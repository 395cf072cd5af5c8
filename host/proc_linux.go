package host

import (
	"errors"
	"os/exec"
	"syscall"
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
