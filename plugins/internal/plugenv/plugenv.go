package plugenv

import (
	"os"
	"path/filepath"
	"strconv"

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

// Bytes reads a size in bytes from env var key: def when unset, 0 for no
// limit. Anything but a whole number from 0 up is a CodeInvalidConfig
// error naming key.
func Bytes(key string, def int64) (int64, error) {
	v := os.Getenv(key)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, contracts.Errorf(contracts.CodeInvalidConfig, "%s: %q is not a size in bytes (a whole number, 0 for no limit)", key, v).With("setting", key)
	}
	return n, nil
}

// Bool reads env var key as strconv.ParseBool does: false when unset, a
// CodeInvalidConfig error naming key when it does not parse.
func Bool(key string) (bool, error) {
	v := os.Getenv(key)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, contracts.Errorf(contracts.CodeInvalidConfig, "%s: %q is not true or false", key, v).With("setting", key)
	}
	return b, nil
}
