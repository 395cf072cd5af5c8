package pgtest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// SingleRowCommits is the anchor a store's write rate is compared with:
// writers goroutines insert rows small rows in all, one autocommit INSERT
// at a time (into a table anchor it creates), b.N times over; it returns
// rows per second, what this database and disk can commit.
func SingleRowCommits(b *testing.B, pool *pgxpool.Pool, writers, rows int) float64 {
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE TABLE anchor (id bigserial PRIMARY KEY, run_id text NOT NULL, n integer NOT NULL, v text NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for range b.N {
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		t0 := time.Now()
		for w := range writers {
			wg.Go(func() {
				for i := range rows / writers {
					if _, err := pool.Exec(ctx, `INSERT INTO anchor (run_id, n, v) VALUES ($1, $2, $3)`,
						fmt.Sprint("w", w), i, "a small row of about forty bytes of text"); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		total += time.Since(t0)
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	}
	return float64(b.N*(rows/writers)*writers) / total.Seconds()
}
