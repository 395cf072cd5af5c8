package files

import (
	"path/filepath"

	"github.com/ordo-run/ordo/plugins/internal/plugenv"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// RootEnv names the directory the tools may touch.
const RootEnv = "ORDO_FILES_ROOT"

// Config is where the plugin works.
type Config struct {
	// Root is the only directory tree the tools may read or change.
	Root string
	// DataDir holds the idempotency journal (outside Root unless Root is
	// set to contain it).
	DataDir string
}

// ConfigFromEnv reads ORDO_PLUGIN_DATA_DIR and ORDO_FILES_ROOT. An unset
// root defaults to <data dir>/root, an empty sandbox, rather than the
// working directory, which for a plugin is wherever the host happens to run.
func ConfigFromEnv() (Config, error) {
	data, err := plugenv.DataDir("files")
	if err != nil {
		return Config{}, err
	}
	root, err := plugenv.DirOr(RootEnv, filepath.Join(data, "root"))
	if err != nil {
		return Config{}, err
	}
	return Config{Root: root, DataDir: data}, nil
}

// ToolsFromEnv is ConfigFromEnv then Tools: what the plugin binary serves.
func ToolsFromEnv() ([]sdk.Tool, error) {
	cfg, err := ConfigFromEnv()
	if err != nil {
		return nil, err
	}
	return Tools(cfg)
}
