package embedded

import (
	"errors"
	"fmt"
	"os"
)

// private takes group's and others' access away from the store's files
// an older Ordo made (0644, as SQLite makes them): runs hold goals, tool
// results and people's answers. A file another user owns is left as it
// is; why the store stays readable to others is returned (Store.Exposed).
func private(abs string) error {
	var errs []error
	for _, p := range []string{abs, abs + "-wal", abs + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		if !ownedByMe(fi) {
			errs = append(errs, fmt.Errorf("%s is mode %v and owned by another user", p, fi.Mode().Perm()))
		} else if err := os.Chmod(p, fi.Mode().Perm()&^0o077); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
