//go:build !linux

package mcpsource

import (
	"os/exec"
	"syscall"
)

func isolate(*exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process != nil {
		_ = cmd.Process.Signal(sig)
	}
}
