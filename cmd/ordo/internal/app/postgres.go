package app

import (
	"context"

	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/postgres"
)

// openPostgres opens the shared Postgres store, applying pending
// migrations (under the store's advisory lock, so several servers may
// start at once) unless postgres.auto_migrate is off.
func openPostgres(ctx context.Context, cfg *config.Config) (memory.Checkpointer, error) {
	st, err := postgres.Open(ctx, cfg.Store, postgresOptions(cfg)...)
	if err != nil {
		return nil, err
	}
	return st, nil
}

func migratePostgres(ctx context.Context, cfg *config.Config) ([]string, error) {
	return postgres.Migrate(ctx, cfg.Store, postgresOptions(cfg)...)
}

// postgresOptions are the store options postgres.* sets.
func postgresOptions(cfg *config.Config) []postgres.Option {
	return []postgres.Option{postgres.WithMaxConns(int32(cfg.Postgres.MaxConns)), postgres.WithAutoMigrate(cfg.Postgres.AutoMigrate)}
}
