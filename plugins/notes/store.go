package notes

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/internal/atomicfile"
	"github.com/ordo-run/ordo/plugins/internal/idem"
)

// URLPrefix starts every page URL; get_page and friends accept either form.
const URLPrefix = "ordo://notes/"

const storeVersion = 1

// Page is one note page.
type Page struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Parent    string    `json:"parent,omitempty"`
	Blocks    []Block   `json:"blocks"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Block is one piece of a page's content.
type Block struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	Text      string    `json:"text"`
	CreatedAt time.Time `json:"created_at"`
}

// snapshot is the store file's content. Snapshots are never modified once
// published; a change builds the next one.
type snapshot struct {
	Version     int             `json:"version"`
	Pages       map[string]Page `json:"pages"`
	Idempotency []idem.Record   `json:"idempotency"`
}

// store is the page store over one file.
type store struct {
	path string
	mu   sync.RWMutex
	cur  *snapshot
}

// openStore loads path; a missing file is an empty store. A file that does
// not parse is refused rather than overwritten.
func openStore(path string) (*store, error) {
	s := &store{path: path, cur: &snapshot{Version: storeVersion, Pages: map[string]Page{}}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	var snap snapshot
	if err := json.Unmarshal(data, &snap); err != nil {
		return nil, contracts.Errorf(contracts.CodeInternal, "notes store %s is corrupt: %w", path, err).With("path", path)
	}
	if snap.Version != storeVersion {
		return nil, contracts.Errorf(contracts.CodeInternal, "notes store %s has version %d, this build reads %d", path, snap.Version, storeVersion).With("path", path)
	}
	if snap.Pages == nil {
		snap.Pages = map[string]Page{}
	}
	s.cur = &snap
	return s, nil
}

// snap returns the current snapshot for reading.
func (s *store) snap() *snapshot {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cur
}

// commit publishes a snapshot with page changed and rec remembered (when
// the call was keyed), after writing it durably. Callers are serialised by
// the idempotency guard, so no change is lost between snap and commit.
func (s *store) commit(page Page, stamp idem.Stamp, rec idem.Record) error {
	cur := s.snap()
	next := &snapshot{Version: storeVersion, Pages: maps.Clone(cur.Pages), Idempotency: cur.Idempotency}
	next.Pages[page.ID] = page
	if stamp.Keyed() {
		next.Idempotency = append(slices.Clip(cur.Idempotency), rec)
	}
	data, err := json.MarshalIndent(next, "", " ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(s.path, data, 0o600); err != nil {
		return err
	}
	s.mu.Lock()
	s.cur = next
	s.mu.Unlock()
	return nil
}

// newID makes a random id with prefix.
func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// pageID accepts a page id or its URL.
func pageID(ref string) string { return strings.TrimPrefix(ref, URLPrefix) }

func (p Page) url() string { return URLPrefix + p.ID }

// content is the page's text: its blocks, one paragraph each.
func (p Page) content() string {
	texts := make([]string, len(p.Blocks))
	for i, b := range p.Blocks {
		texts[i] = b.Text
	}
	return strings.Join(texts, "\n\n")
}
