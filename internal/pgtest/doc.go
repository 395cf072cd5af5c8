// Package pgtest gives tests a PostgreSQL of their own on the database
// named by ORDO_TEST_POSTGRES_DSN: a fresh schema or a fresh database,
// dropped when the test ends, so tests and packages run against one server
// in parallel. Without the variable the test is skipped, saying why. Only
// tests import it.
package pgtest
