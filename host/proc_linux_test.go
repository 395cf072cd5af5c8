package host

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ordo-run/ordo/internal/testwait"
)

// watchExit sees a process exit before anyone reaps it (the zombie a
// crashed plugin is until go-plugin waits for it), and knows a pid that is
// already gone.
func TestWatchExit(t *testing.T) {
	fd, err := unix.PidfdOpen(os.Getpid(), unix.PIDFD_NONBLOCK)
	if err != nil {
		t.Skipf("no pidfd here (%v): watchExit asks the kernel on each call", err)
	}
	unix.Close(fd)
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	exited := watchExit(pid)
	if exited() {
		t.Fatal("a running process reported exited")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 10*time.Second, "the exit seen before the reaping", exited)
	if processGone(pid) {
		t.Fatal("the process was reaped; the test meant to see it as a zombie")
	}
	_ = cmd.Wait()
	if !watchExit(pid)() {
		t.Fatal("a reaped process reported running")
	}
	if watchExit(0)() {
		t.Fatal("no pid reported exited")
	}
}
