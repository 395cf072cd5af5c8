package app

import (
	"context"

	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/postgres"
)

// openPostgres opens the shared Postgres store, applying pending
// migrations (under the store's advisory lock, so several servers may
// start at once).
func openPostgres(ctx context.Context, dsn string) (memory.Checkpointer, error) {
	st, err := postgres.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return st, nil
}

func migratePostgres(ctx context.Context, dsn string) ([]string, error) {
	return postgres.Migrate(ctx, dsn)
}
