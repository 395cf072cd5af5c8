package app

import (
	"context"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

// openPostgres opens the shared Postgres store.
func openPostgres(context.Context, string) (memory.Checkpointer, error) {
	return nil, errNoPostgres()
}

func migratePostgres(context.Context, string) ([]string, error) { return nil, errNoPostgres() }

func errNoPostgres() error {
	return contracts.Errorf(contracts.CodeInvalidConfig, "this build has no Postgres store yet").With("key", "store")
}
