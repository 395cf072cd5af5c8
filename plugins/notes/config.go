package notes

import (
	"github.com/ordo-run/ordo/plugins/internal/plugenv"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// Config is where the store lives.
type Config struct {
	// DataDir holds notes.json, the store.
	DataDir string
}

// ConfigFromEnv uses ORDO_PLUGIN_DATA_DIR, or the XDG data directory.
func ConfigFromEnv() (Config, error) {
	dir, err := plugenv.DataDir("notes")
	return Config{DataDir: dir}, err
}

// ToolsFromEnv is ConfigFromEnv then Tools: what the plugin binary serves.
func ToolsFromEnv() ([]sdk.Tool, error) {
	cfg, err := ConfigFromEnv()
	if err != nil {
		return nil, err
	}
	return Tools(cfg)
}
