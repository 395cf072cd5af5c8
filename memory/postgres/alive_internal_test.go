package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ordo-run/ordo/internal/pgtest"
)

// What the liveness peek costs a statement: the cheapest round trip
// (SELECT 1) through a pool without the peek and with it, alternated, so
// compare each pair of one run.
func BenchmarkAlivePeek(b *testing.B) {
	dsn := pgtest.DSN(b)
	for range 3 {
		for _, peek := range []bool{false, true} {
			name := "plain"
			if peek {
				name = "peek"
			}
			b.Run(name, func(b *testing.B) {
				cfg, err := pgxpool.ParseConfig(dsn)
				if err != nil {
					b.Fatal(err)
				}
				if peek {
					cfg.PrepareConn = alive
				}
				p, err := pgxpool.NewWithConfig(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer p.Close()
				for b.Loop() {
					var x int
					if err := p.QueryRow(context.Background(), "SELECT 1").Scan(&x); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// A pooled connection can be idle with a read still pending on its socket:
// pgx's background reader, started when a write is slow (over 15 ms, under
// load), may begin another read after it has taken the whole answer, and
// that read ends only with the next statement's answer. The peek must not
// wait for the socket's read lock behind it: it did, and a process's next
// statement on that connection waited for ever (a crash test's recovery
// under CI load). Here a goroutine's read stands in for pgx's.
func TestAliveBesidePendingRead(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	nc := c.PgConn().Conn()
	reading := make(chan struct{})
	go func() {
		close(reading)
		var b [1]byte
		_, _ = nc.Read(b[:]) // no data comes on an idle connection: it waits until Close
	}()
	<-reading
	time.Sleep(50 * time.Millisecond) // let the read park on the socket
	done := make(chan bool, 1)
	go func() {
		ok, _ := alive(ctx, c)
		done <- ok
	}()
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("an idle connection with a pending read was taken for dead")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the liveness peek waited behind a pending read")
	}
}
