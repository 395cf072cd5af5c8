// Package postgres is the run store for several Ordo servers sharing runs:
// PostgreSQL through pgx/v5, with embedded versioned migrations, a full
// checkpoint history, append-only step and decision tables for audit, and
// leases so that exactly one server drives a run and a dead server's runs
// are picked up by another.
package postgres
