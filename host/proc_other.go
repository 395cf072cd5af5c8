//go:build !linux

package host

import "os/exec"

// setPdeathsig is Linux-only; elsewhere a SIGKILLed host can leave plugins.
func setPdeathsig(*exec.Cmd) {}
