//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package console

import "os"

// echoSwitch cannot hide typing here: secret answers are echoed.
func echoSwitch(*os.File) func(on bool) { return nil }
