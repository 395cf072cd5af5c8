package embed

import (
	"encoding/json"
	"errors"
	"os"
)

// Manifest is stored beside a chromem-go store: which embedder made the
// vectors, and their dimension (chromem-go keeps neither readable), so a
// store is re-embedded rather than compared across two models.
type Manifest struct {
	Format   int    `json:"format"`
	Identity string `json:"identity"`
	Dim      int    `json:"dim"`
}

// ReadManifest reads the manifest at path; a missing file is the zero
// Manifest (a new store). Callers wrap the error with their own code.
func ReadManifest(path string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	return m, err
}

// WriteManifest replaces the manifest at path through a rename of a file
// synced first, so neither a crash nor a power cut leaves a half-written
// one (a rename can reach the disk before the data it names).
func WriteManifest(path string, m Manifest) error {
	b, _ := json.Marshal(m)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
