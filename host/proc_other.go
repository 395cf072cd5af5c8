//go:build !linux

package host

import "os/exec"

// setPdeathsig is Linux-only; elsewhere a SIGKILLed host can leave plugins.
func setPdeathsig(*exec.Cmd) {}

// processGone is known only on Linux here; elsewhere go-plugin's Exited
// alone tells.
func processGone(int) bool { return false }
