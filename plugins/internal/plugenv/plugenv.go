package plugenv

import (
	"os"
	"path/filepath"

	"github.com/ordo-run/ordo/contracts"
)

// DataDirEnv is the variable the host sets to a plugin's own data directory.
const DataDirEnv = "ORDO_PLUGIN_DATA_DIR"

// DataDir returns plugin's data directory, created 0700 if missing:
// $ORDO_PLUGIN_DATA_DIR, else $XDG_DATA_HOME/ordo/plugins/<plugin>, else
// ~/.local/share/ordo/plugins/<plugin>.
func DataDir(plugin string) (string, error) {
	dir := os.Getenv(DataDirEnv)
	if dir == "" {
		base := os.Getenv("XDG_DATA_HOME")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", contracts.Errorf(contracts.CodeInvalidConfig, "%s is unset and there is no home directory: %w", DataDirEnv, err).
					With("setting", DataDirEnv)
			}
			base = filepath.Join(home, ".local", "share")
		}
		dir = filepath.Join(base, "ordo", "plugins", plugin)
	}
	return ensure(DataDirEnv, dir)
}

// DirOr returns the directory named by env var key when set (it must exist
// then: a typo should not silently create a new, empty root), else def,
// created 0700 if missing.
func DirOr(key, def string) (string, error) {
	if dir := os.Getenv(key); dir != "" {
		return dir, nil
	}
	return ensure(key, def)
}

func ensure(key, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", contracts.Errorf(contracts.CodeInvalidConfig, "%s: create %q: %w", key, dir, err).With("setting", key)
	}
	return dir, nil
}
