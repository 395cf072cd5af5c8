package host

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/ordo-run/ordo/contracts"
)

// The contract cache lets New list a plugin's tools before its process
// has started: what the plugin described at its last start, kept per
// plugin in <data dir>/plugin-contracts/NAME.json with the binary's SHA-256
// and a stamp of its file (device, inode, size, modification and change
// times). An entry serves only a binary whose stamp, checksum, path,
// environment and arguments are those it was written for: rewriting or
// replacing the binary changes its stamp, so a changed checksum is never
// served from the cache. The stamp also spares pin a hash of an unchanged
// binary. Only a plugin trusted as found (PinFound: the bundled ones) then
// starts on the cache's word; any other binary's checksum is checked on
// the bytes executed (see start).

// cacheEntry is one plugin's cached description.
type cacheEntry struct {
	Path      string            `json:"path"`
	Stamp     fileStamp         `json:"stamp"`
	SHA256    string            `json:"sha256"`
	Setup     string            `json:"setup"` // hash of Env and Args
	Version   string            `json:"version"`
	Contracts []json.RawMessage `json:"contracts"`
}

// fileStamp identifies one version of a file without reading it.
type fileStamp struct {
	Dev, Ino         uint64
	Size             int64
	MtimeNS, CtimeNS int64
}

// contractCache reads and writes the entries; safe for concurrent use.
type contractCache struct {
	dir string
	mu  sync.Mutex
}

func newContractCache(dataDir string) *contractCache {
	return &contractCache{dir: filepath.Join(dataDir, "plugin-contracts")}
}

func (c *contractCache) file(name string) string { return filepath.Join(c.dir, name+".json") }

// valid returns the entry for spec's plugin if it describes the binary at
// spec.Path as it is now (see fileStamp) with spec's Env and Args; a
// non-empty spec.SHA256 must match too.
func (c *contractCache) valid(spec PluginSpec) (*cacheEntry, bool) {
	st, ok := stampOf(spec.Path)
	if !ok {
		return nil, false
	}
	c.mu.Lock()
	raw, err := os.ReadFile(c.file(spec.Name))
	c.mu.Unlock()
	if err != nil {
		return nil, false
	}
	var e cacheEntry
	if json.Unmarshal(raw, &e) != nil || e.Path != spec.Path || e.Stamp != st || e.Setup != setupHash(spec) ||
		len(e.SHA256) != 64 || spec.SHA256 != "" && spec.SHA256 != e.SHA256 {
		return nil, false
	}
	return &e, true
}

// store records what the plugin described after a start, unless the entry
// already says so. Failures only cost the next start its head start.
func (c *contractCache) store(spec PluginSpec, version string, cs []contracts.Contract) {
	st, ok := stampOf(spec.Path)
	if !ok {
		return
	}
	e := cacheEntry{Path: spec.Path, Stamp: st, SHA256: spec.SHA256, Setup: setupHash(spec), Version: version}
	for _, ct := range cs {
		b, err := json.Marshal(ct)
		if err != nil {
			return
		}
		e.Contracts = append(e.Contracts, b)
	}
	data, err := json.Marshal(e)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, err := os.ReadFile(c.file(spec.Name)); err == nil && string(old) == string(data) {
		return
	}
	if os.MkdirAll(c.dir, 0o700) != nil {
		return
	}
	tmp := c.file("." + spec.Name + ".tmp")
	if os.WriteFile(tmp, data, 0o600) != nil || os.Rename(tmp, c.file(spec.Name)) != nil {
		os.Remove(tmp)
	}
}

// forget drops a plugin's entry (its start failed: the cache was wrong).
func (c *contractCache) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	os.Remove(c.file(name))
}

// contracts decodes the cached contracts.
func (e *cacheEntry) contracts() ([]contracts.Contract, error) {
	out := make([]contracts.Contract, 0, len(e.Contracts))
	for _, raw := range e.Contracts {
		var ct contracts.Contract
		if err := json.Unmarshal(raw, &ct); err != nil {
			return nil, err
		}
		out = append(out, ct)
	}
	return out, nil
}

// setupHash fingerprints what besides the binary can change a plugin's
// description: its environment and arguments.
func setupHash(spec PluginSpec) string {
	h := sha256.New()
	keys := make([]string, 0, len(spec.Env))
	for k := range spec.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		h.Write([]byte("env\x00" + k + "\x00" + spec.Env[k] + "\x00"))
	}
	for _, a := range spec.Args {
		h.Write([]byte("arg\x00" + a + "\x00"))
	}
	return hex.EncodeToString(h.Sum(nil))
}
