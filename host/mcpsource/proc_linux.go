package mcpsource

import (
	"os/exec"
	"syscall"
)

// isolate puts a stdio upstream in its own process group (so npx and the
// server it spawns stop together) and has the kernel kill it if Ordo dies.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalGroup signals the upstream's whole process group.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
	}
}
