// Package testchild runs one test of the running test binary in a process
// of its own: the writer a crash test SIGKILLs.
package testchild

import (
	"bufio"
	"os"
	"os/exec"
	"testing"
)

// Start starts the test named test (its whole name) of this test binary in
// a new process, with env added to this one's environment, and returns the
// process and a scanner of what it prints.
func Start(t testing.TB, test string, env ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewScanner(out)
}
