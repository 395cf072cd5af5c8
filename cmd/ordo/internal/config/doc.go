// Package config owns the ordo command's one configuration file: its keys
// and their defaults, the ORDO_* environment overrides, and validation.
//
// It exists so that every subcommand (serve, run, runs, tools, plugins,
// migrate) reads the same settings the same way, and so that a bad setting
// is refused before anything starts, with a contracts.CodeInvalidConfig
// error whose "key" detail names the offending key.
package config
