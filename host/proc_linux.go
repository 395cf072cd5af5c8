package host

import (
	"os/exec"
	"syscall"
)

// setPdeathsig makes the kernel kill the plugin if Ordo dies, even by
// SIGKILL, so plugins never outlive the host.
func setPdeathsig(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
