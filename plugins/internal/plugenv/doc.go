// Package plugenv turns a bundled plugin's environment into directories, with
// defaults that work on a fresh machine: the data directory the host passes
// in ORDO_PLUGIN_DATA_DIR, or the XDG data directory when a plugin runs on
// its own.
package plugenv
