package sheets

import (
	"path/filepath"

	"github.com/ordo-run/ordo/plugins/internal/plugenv"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// Environment variables the plugin reads besides ORDO_PLUGIN_DATA_DIR.
const (
	RootEnv      = "ORDO_SHEETS_ROOT"            // the directory holding the sheets
	HardLinksEnv = "ORDO_SHEETS_ALLOW_HARDLINKS" // Config.AllowHardLinks
)

// Config is where the sheets are.
type Config struct {
	// Root is the only directory tree the tools may read.
	Root string
	// AllowHardLinks lets the tools read a file with other hard links
	// (safepath.Root.Linked).
	AllowHardLinks bool
	// DataDir is the plugin's data directory: hidden, with the host's
	// <data_dir> holding it, when the root contains it (safepath.Root.HideOrdo).
	DataDir string
}

// ConfigFromEnv reads the variables above; with ORDO_SHEETS_ROOT unset,
// the root is <data dir>/root (created empty). Point it at the files root
// to query CSVs that files.write produced.
func ConfigFromEnv() (Config, error) {
	data, err := plugenv.DataDir("sheets")
	if err != nil {
		return Config{}, err
	}
	root, err := plugenv.DirOr(RootEnv, filepath.Join(data, "root"))
	if err != nil {
		return Config{}, err
	}
	links, err := plugenv.Bool(HardLinksEnv)
	return Config{Root: root, AllowHardLinks: links, DataDir: data}, err
}

// ToolsFromEnv is ConfigFromEnv then Tools: what the plugin binary serves.
func ToolsFromEnv() ([]sdk.Tool, error) {
	cfg, err := ConfigFromEnv()
	if err != nil {
		return nil, err
	}
	return Tools(cfg)
}
