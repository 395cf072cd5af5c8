package console

import (
	"context"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ordo-run/ordo/cmd/ordo/internal/ptytest"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/syncbuf"
	"github.com/ordo-run/ordo/internal/testwait"
)

// A secret field is typed with the terminal's echo off, and echo comes
// back after it; an ordinary field is echoed as typed.
func TestSecretAnswerIsNotEchoed(t *testing.T) {
	master, replica, echoed := ptytest.Open(t)
	echoOn := func() bool {
		tt, err := unix.IoctlGetTermios(int(replica.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		return tt.Lflag&unix.ECHO != 0
	}
	if !echoOn() {
		t.Fatal("a new terminal echoes")
	}
	out := &syncbuf.Buffer{}
	p := NewPrompter(replica, out, "ann")
	in := &contracts.Interrupt{Kind: contracts.InterruptInputRequired, ActionID: "a1", Tool: "vault.put",
		Fields: []string{"$.key", "$.token"}, Secret: []string{"$.token"}}
	type result struct {
		d   contracts.Decision
		err error
	}
	done := make(chan result, 1)
	go func() {
		d, err := p.Decide(context.Background(), &contracts.Run{ID: "r1", Interrupt: in})
		done <- result{d, err}
	}()
	testwait.Until(t, 10*time.Second, "the key prompt", func() bool { return strings.Contains(out.String(), "$.key > ") })
	if _, err := master.WriteString("k1\n"); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 10*time.Second, "the secret prompt", func() bool { return strings.Contains(out.String(), "(secret, not shown) > ") })
	if echoOn() {
		t.Fatal("echo is on while the secret is typed")
	}
	if _, err := master.WriteString("s3cret\n"); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.d.Answers["$.key"] != "k1" || r.d.Answers["$.token"] != "s3cret" {
		t.Fatalf("decision %+v, %v", r.d, r.err)
	}
	if !echoOn() {
		t.Fatal("echo stays off after the secret")
	}
	time.Sleep(50 * time.Millisecond) // let the echo of what was typed arrive
	if s := echoed.String(); !strings.Contains(s, "k1") || strings.Contains(s, "s3cret") {
		t.Fatalf("the terminal showed %q", s)
	}
}
