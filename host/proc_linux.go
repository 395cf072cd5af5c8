package host

import (
	"errors"
	"os/exec"
	"syscall"
)

// setPdeathsig makes the kernel kill the plugin if Ordo dies, even by
// SIGKILL, so plugins never outlive the host.
func setPdeathsig(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// processGone reports whether no process pid exists any more (it exited
// and was reaped), so a call now cannot reach it.
func processGone(pid int) bool {
	return pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
