//go:build !unix

package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// alive is the pool's PrepareConn; off unix the socket is not peeked at,
// and a dropped connection fails its next statement.
func alive(context.Context, *pgx.Conn) (bool, error) { return true, nil }
