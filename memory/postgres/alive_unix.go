//go:build unix

package postgres

import (
	"context"
	"crypto/tls"
	"errors"
	"syscall"

	"github.com/jackc/pgx/v5"
)

// alive is the pool's PrepareConn: it drops a pooled connection whose
// server side has gone (Postgres restarted, or the backend was
// terminated) before a statement is sent on it, so the statement runs on
// a fresh connection instead of failing. An idle connection has nothing to
// read; a dead one has the server's FATAL message or end of stream
// waiting. One non-blocking peek at the socket tells them apart, with no
// round trip and no wait. The peek runs under Control, not Read: an idle
// connection may still have a read pending on it (pgx's background
// reader, started by a slow write, can begin one more read after taking
// the answer; the next statement's answer ends it), and Read would wait
// for that read's lock for ever. Beside such a read, a server's goodbye
// goes to pgx's reader rather than to the peek, and the statement fails
// as it would without the peek.
func alive(_ context.Context, c *pgx.Conn) (bool, error) {
	nc := c.PgConn().Conn()
	if t, ok := nc.(*tls.Conn); ok {
		nc = t.NetConn()
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true, nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return true, nil
	}
	var perr error
	var buf [1]byte
	if err := raw.Control(func(fd uintptr) {
		_, _, perr = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	}); err != nil {
		return false, nil
	}
	switch {
	case errors.Is(perr, syscall.EAGAIN) || errors.Is(perr, syscall.EWOULDBLOCK) || errors.Is(perr, syscall.EINTR):
		return true, nil // nothing waiting: the connection is idle, as it should be
	default:
		return false, nil // a message, end of stream or a socket error on an idle connection: it is gone
	}
}
