//go:build !linux

package host

import "os/exec"

// isolate is Linux-only; elsewhere a SIGKILLed host can leave plugins, and
// a plugin's children can outlive it.
func isolate(*exec.Cmd) {}

// killGroup is Linux-only (see isolate).
func killGroup(int) {}

// processGone is known only on Linux here; elsewhere go-plugin's Exited
// alone tells.
func processGone(int) bool { return false }

// watchExit is processGone's answer: nothing to watch here.
func watchExit(int) func() bool { return func() bool { return false } }
