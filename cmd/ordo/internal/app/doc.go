// Package app assembles a running Ordo from a configuration: the run store
// (embedded or Postgres), the host with its plugins (bundled, declared and
// the watched plugins directory), the built-in LLM tools, the tool
// recommender following the catalog, the LLM provider, the engine and the
// MCP server.
//
// It is the one place that knows how the pieces fit, so every subcommand
// gets the same wiring and the packages below stay unaware of each other.
package app
