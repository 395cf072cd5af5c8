package notes

import (
	"github.com/ordo-run/ordo/plugins/internal/plugenv"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// MaxBytesEnv sets Config.MaxBytes; DefaultMaxBytes is its value unset.
const (
	MaxBytesEnv     = "ORDO_NOTES_MAX_BYTES"
	DefaultMaxBytes = 64 << 20
)

// Config is where the store lives.
type Config struct {
	// DataDir holds notes.json, the store.
	DataDir string
	// MaxBytes bounds notes.json: a change that would make it larger is
	// refused. Every change rewrites the whole file. 0 is no limit.
	MaxBytes int64
}

// ConfigFromEnv uses ORDO_PLUGIN_DATA_DIR, or the XDG data directory, and
// ORDO_NOTES_MAX_BYTES.
func ConfigFromEnv() (Config, error) {
	dir, err := plugenv.DataDir("notes")
	if err != nil {
		return Config{}, err
	}
	max, err := plugenv.Bytes(MaxBytesEnv, DefaultMaxBytes)
	return Config{DataDir: dir, MaxBytes: max}, err
}

// ToolsFromEnv is ConfigFromEnv then Tools: what the plugin binary serves.
func ToolsFromEnv() ([]sdk.Tool, error) {
	cfg, err := ConfigFromEnv()
	if err != nil {
		return nil, err
	}
	return Tools(cfg)
}
