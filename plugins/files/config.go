package files

import (
	"path/filepath"

	"github.com/ordo-run/ordo/plugins/internal/plugenv"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// Environment variables the plugin reads besides ORDO_PLUGIN_DATA_DIR.
const (
	RootEnv      = "ORDO_FILES_ROOT"            // the directory the tools may touch
	MaxBytesEnv  = "ORDO_FILES_MAX_BYTES"       // Config.MaxBytes
	HardLinksEnv = "ORDO_FILES_ALLOW_HARDLINKS" // Config.AllowHardLinks
)

// DefaultMaxBytes is Config.MaxBytes when ORDO_FILES_MAX_BYTES is unset.
const DefaultMaxBytes = 1 << 30

// Config is where the plugin works.
type Config struct {
	// Root is the only directory tree the tools may read or change.
	Root string
	// DataDir holds the idempotency journal (outside Root unless Root is
	// set to contain it).
	DataDir string
	// MaxBytes bounds the size of the regular files under Root: a write
	// that would grow them past it is refused. 0 is no limit.
	MaxBytes int64
	// AllowHardLinks lets read and append reach a file with other hard
	// links (safepath.Root.Linked).
	AllowHardLinks bool

	journalMax int64 // journalMaxBytes unless a test sets it
}

// ConfigFromEnv reads ORDO_PLUGIN_DATA_DIR and the variables above. An unset
// root defaults to <data dir>/root, an empty sandbox, rather than the
// working directory, which for a plugin is wherever the host happens to run.
func ConfigFromEnv() (Config, error) {
	data, err := plugenv.DataDir("files")
	if err != nil {
		return Config{}, err
	}
	cfg := Config{DataDir: data}
	if cfg.Root, err = plugenv.DirOr(RootEnv, filepath.Join(data, "root")); err != nil {
		return Config{}, err
	}
	if cfg.MaxBytes, err = plugenv.Bytes(MaxBytesEnv, DefaultMaxBytes); err != nil {
		return Config{}, err
	}
	cfg.AllowHardLinks, err = plugenv.Bool(HardLinksEnv)
	return cfg, err
}

// ToolsFromEnv is ConfigFromEnv then Tools: what the plugin binary serves.
func ToolsFromEnv() ([]sdk.Tool, error) {
	cfg, err := ConfigFromEnv()
	if err != nil {
		return nil, err
	}
	return Tools(cfg)
}
