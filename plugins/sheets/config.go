package sheets

import (
	"path/filepath"

	"github.com/ordo-run/ordo/plugins/internal/plugenv"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// RootEnv names the directory holding the sheets.
const RootEnv = "ORDO_SHEETS_ROOT"

// Config is where the sheets are.
type Config struct {
	// Root is the only directory tree the tools may read.
	Root string
}

// ConfigFromEnv reads ORDO_SHEETS_ROOT; unset, the root is <data dir>/root
// (created empty). Point it at the files root to query CSVs that
// files.write produced.
func ConfigFromEnv() (Config, error) {
	data, err := plugenv.DataDir("sheets")
	if err != nil {
		return Config{}, err
	}
	root, err := plugenv.DirOr(RootEnv, filepath.Join(data, "root"))
	return Config{Root: root}, err
}

// ToolsFromEnv is ConfigFromEnv then Tools: what the plugin binary serves.
func ToolsFromEnv() ([]sdk.Tool, error) {
	cfg, err := ConfigFromEnv()
	if err != nil {
		return nil, err
	}
	return Tools(cfg)
}
