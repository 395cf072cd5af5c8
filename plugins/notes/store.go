package notes

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/ids"
	"github.com/ordo-run/ordo/plugins/internal/atomicfile"
	"github.com/ordo-run/ordo/plugins/internal/filelock"
	"github.com/ordo-run/ordo/plugins/internal/idem"
	"github.com/ordo-run/ordo/plugins/internal/killpoint"
	"github.com/ordo-run/ordo/plugins/internal/toolerr"
	"github.com/ordo-run/ordo/plugins/sdk"
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

// store is the page store over one file, which several processes (Ordo
// servers sharing the data directory) may change: every change takes the
// lock file's lock, reads the file if another process replaced it, and
// replaces it whole; every read first checks whether it was replaced.
type store struct {
	path string
	max  int64 // Config.MaxBytes
	lock *filelock.Mutex
	mu   sync.Mutex // guards cur and held
	cur  *snapshot
	// held is the file cur was read from, kept open: its inode cannot be
	// reused while it is, so "the file at path is still held" (SameFile)
	// means nothing was committed since.
	held     *os.File
	heldInfo os.FileInfo
}

// openStore loads path; a missing file is an empty store. A file that does
// not parse is refused rather than overwritten.
func openStore(path string, max int64) (*store, error) {
	lock, err := filelock.Open(filepath.Join(filepath.Dir(path), lockName))
	if err != nil {
		return nil, err
	}
	s := &store{path: path, max: max, lock: lock}
	if _, err := s.snap(); err != nil {
		return nil, err
	}
	return s, nil
}

// snap returns the latest committed snapshot, for reading. When the file
// at path is still the one held (one stat), nothing was committed since.
func (s *store) snap() (*snapshot, error) {
	info, err := os.Stat(s.path)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil && s.held != nil && os.SameFile(s.heldInfo, info) {
		return s.cur, nil
	}
	f, err := os.Open(s.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := s.load(f); err != nil {
		return nil, err
	}
	return s.cur, nil
}

// load makes f (the file now at path; nil when there is none) the current
// snapshot. Callers hold s.mu.
func (s *store) load(f *os.File) error {
	if f == nil {
		s.hold(nil, nil, &snapshot{Version: storeVersion, Pages: map[string]Page{}})
		return nil
	}
	info, err := f.Stat()
	var data []byte
	if err == nil {
		data, err = io.ReadAll(f)
	}
	if err != nil {
		f.Close()
		return err
	}
	var snap snapshot
	if err := json.Unmarshal(data, &snap); err != nil {
		f.Close()
		return contracts.Errorf(contracts.CodeInternal, "notes store %s is corrupt: %w", s.path, err).With("path", s.path)
	}
	if snap.Version != storeVersion {
		f.Close()
		return contracts.Errorf(contracts.CodeInternal, "notes store %s has version %d, this build reads %d", s.path, snap.Version, storeVersion).With("path", s.path)
	}
	if snap.Pages == nil {
		snap.Pages = map[string]Page{}
	}
	s.hold(f, info, &snap)
	return nil
}

// hold publishes snap, read from f (whose stat is info).
func (s *store) hold(f *os.File, info os.FileInfo, snap *snapshot) {
	if s.held != nil {
		s.held.Close()
	}
	s.held, s.heldInfo, s.cur = f, info, snap
}

// change runs one store mutation of call exactly once per idempotency key,
// under the lock: mutate builds the changed page and the call's result
// from the latest snapshot, and the page and the key's record are
// committed in one atomic replace of the file. A change that would make
// the file larger than s.max is refused, naming field.
func (s *store) change(call sdk.Call, field string, mutate func(cur *snapshot) (Page, any, error)) (any, error) {
	if err := s.lock.Lock(); err != nil {
		return nil, err
	}
	defer s.lock.Unlock()
	cur, err := s.snap()
	if err != nil {
		return nil, err
	}
	killpoint.Here(call.Tool + "/start")
	return idem.NewGuard(cur.Idempotency).Do(call.Tool, call.IdempotencyKey, call.Payload, func(st idem.Stamp) (idem.Record, error) {
		page, result, err := mutate(cur)
		if err != nil {
			return idem.Record{}, err
		}
		rec, err := st.Record(result)
		if err == nil {
			err = s.commit(call.Tool, field, cur, page, st, rec)
		}
		return rec, err
	})
}

// commit writes cur with page changed and rec remembered (when the call
// was keyed) and publishes it. Callers hold the lock.
func (s *store) commit(tool, field string, cur *snapshot, page Page, stamp idem.Stamp, rec idem.Record) error {
	next := &snapshot{Version: storeVersion, Pages: maps.Clone(cur.Pages), Idempotency: cur.Idempotency}
	next.Pages[page.ID] = page
	if stamp.Keyed() {
		next.Idempotency = append(slices.Clip(cur.Idempotency), rec)
	}
	data, err := json.MarshalIndent(next, "", " ")
	if err != nil {
		return err
	}
	if s.max > 0 && int64(len(data)) > s.max {
		return toolerr.Refuse(field, "the notes store would be %d bytes, over the limit of %d (bundled.notes.max_bytes)", len(data), s.max).
			With("limit", s.max)
	}
	if err := atomicfile.WriteFile(s.path, data, 0o600, tool+"/tmp"); err != nil {
		return err
	}
	killpoint.Here(tool + "/effect")
	f, err := os.Open(s.path) // what was just written: no other process writes under the lock
	if err != nil {
		return err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	s.mu.Lock()
	s.hold(f, info, next)
	s.mu.Unlock()
	return nil
}

// newID makes a random id with prefix.
func newID(prefix string) string {
	return prefix + ids.Hex(8)
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
