package files

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ordo-run/ordo/plugins/internal/atomicfile"
	"github.com/ordo-run/ordo/plugins/internal/idem"
	"github.com/ordo-run/ordo/plugins/internal/jsonl"
	"github.com/ordo-run/ordo/plugins/internal/killpoint"
	"github.com/ordo-run/ordo/plugins/internal/toolerr"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// The effect of files.write and files.delete is in the user's tree and its
// record in the journal: two files, so no single write can commit both.
// A keyed call therefore journals its intent first (the change about to be
// made, with what was there before), then makes the change, then journals
// the result. A call re-issued with the key of an intent that has no
// result finishes the change where it was cut off, checking the tree for
// what already happened, and answers what the first call would have.

// entry is one journal line: an intent, or a done record (a line without
// an intent, which is all older journals hold), or the first line of a
// compacted journal (Generation).
type entry struct {
	Key         string          `json:"key"`
	PayloadHash string          `json:"payload_sha256"`
	Result      json.RawMessage `json:"result,omitempty"`
	Intent      *change         `json:"intent,omitempty"`
	Generation  int             `json:"compacted,omitempty"`
}

// journalMaxBytes bounds the journal: past it, compact keeps every intent
// still pending and the newest done records that fill half of it (some
// 9,000 keyed writes and deletes at ~230 bytes each).
const journalMaxBytes = 4 << 20

// journal is the files plugin's view of its journal, kept up to date with
// what every process sharing the data directory appended.
type journal struct {
	path    string
	max     int64 // journalMaxBytes; smaller in tests
	log     *jsonl.Follower
	first   []byte // the start of the file's first line: a compaction changes it
	gen     int    // the file's Generation
	guard   *idem.Guard
	pending map[string]entry // intents without a result
}

func newJournal(path string, max int64) *journal {
	j := &journal{path: path, max: max}
	j.reset()
	return j
}

// reset forgets what was read, to read the file again from its start.
func (j *journal) reset() {
	j.log, j.first, j.gen = jsonl.Follow(j.path), nil, 0
	j.guard, j.pending = idem.NewGuard(nil), map[string]entry{}
}

// refresh reads the lines appended since the last refresh; callers hold the
// lock. A journal compacted since (its first line is a later generation's)
// is read again whole; one changed otherwise is the Follower's to report.
func (j *journal) refresh() error {
	first, err := firstLine(j.path)
	if err != nil {
		return err
	}
	var head entry
	if j.first != nil && !bytes.Equal(first, j.first) && json.Unmarshal(first, &head) == nil && head.Generation > j.gen {
		j.reset()
	}
	lines, err := j.log.Next()
	if err != nil {
		return err
	}
	for _, line := range lines {
		if j.first == nil {
			j.first = line[:min(len(line), firstLen)]
		}
		var e entry
		if err := json.Unmarshal(line, &e); err != nil {
			return fmt.Errorf("%s: %s is not a journal entry: %w", j.path, line, err)
		}
		if e.Generation != 0 {
			j.gen = e.Generation
			continue
		}
		if e.Intent != nil {
			j.follows(e.Intent)
			j.pending[e.Key] = e
			continue
		}
		delete(j.pending, e.Key)
		j.guard.Remember(idem.Record{Key: e.Key, PayloadHash: e.PayloadHash, Result: e.Result})
	}
	return nil
}

// follows notes, on every cut-off append to the same file, the size the
// file had when c, a later change, was planned: it says whether the
// cut-off append happened, even after other appends buried its data.
func (j *journal) follows(c *change) {
	for _, p := range j.pending {
		if p.Intent.Op == "append" && p.Intent.Name == c.Name && p.Intent.Next == nil {
			p.Intent.Next = &c.Offset
		}
	}
}

// perform runs one side effect of call exactly once per idempotency key,
// under the lock: plan looks at the tree and says what will change (or
// refuses); data is the content a write puts.
func (p *plugin) perform(ctx context.Context, call sdk.Call, data []byte, plan func() (*change, error)) (any, error) {
	if err := p.lock.Lock(); err != nil {
		return nil, err
	}
	defer p.lock.Unlock()
	if err := p.journal.refresh(); err != nil {
		return nil, err
	}
	killpoint.Here(call.Tool + "/start")
	return p.journal.guard.Do(call.Tool, call.IdempotencyKey, call.Payload, func(s idem.Stamp) (idem.Record, error) {
		c, resumed := p.journal.pending[s.Key].Intent, true
		if c != nil {
			if err := s.Same(p.journal.pending[s.Key].PayloadHash); err != nil {
				return idem.Record{}, err
			}
		} else {
			resumed = false
			var err error
			if c, err = plan(); err != nil {
				return idem.Record{}, err
			}
			if s.Keyed() {
				c.Tmp = atomicfile.TempName(c.Name, keyTag(s.Key))
				if err := p.journal.append(entry{Key: s.Key, PayloadHash: s.Hash, Intent: c}); err != nil {
					return idem.Record{}, err
				}
				killpoint.Here(c.point("intent"))
			}
		}
		c.data = data
		result, err := c.apply(ctx, p.root.FS(), resumed)
		if err != nil {
			return idem.Record{}, err
		}
		killpoint.Here(c.point("effect"))
		rec, err := s.Record(result)
		if err != nil || !s.Keyed() {
			return rec, err
		}
		if err := p.journal.append(entry{Key: rec.Key, PayloadHash: rec.PayloadHash, Result: rec.Result}); err != nil {
			return rec, err
		}
		delete(p.journal.pending, s.Key)
		killpoint.Here(c.point("done"))
		return rec, nil
	})
}

// append journals e durably; the Follower reads it back on the next
// refresh, so the journal is kept in step by the same path as other
// processes' lines. A journal grown past its bound is then compacted.
func (j *journal) append(e entry) error {
	if err := jsonl.Append(j.path, e); err != nil {
		return err
	}
	if err := j.refresh(); err != nil || j.log.Size() <= j.max {
		return err
	}
	return j.compact()
}

// firstLen is how much of the first line tells one journal file from the
// next: a compacted file starts with its generation, an older one with
// its first entry's key.
const firstLen = 128

// firstLine reads the start of the journal's first line (nil when there
// is none).
func firstLine(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, firstLen)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	line, _, complete := bytes.Cut(buf[:n], []byte("\n"))
	if !complete && n < firstLen {
		return nil, nil // no complete line yet
	}
	return line, nil
}

// compact rewrites the journal, under the lock and after a refresh, as a
// new generation holding every pending intent (with where the next change
// to its file started, which the later intents it came from held) and the
// newest done records that fit in half the bound. A key is re-issued when
// the call it made was cut off (a crash, a lost answer), soon after and in
// any case before the thousands of keyed calls that would push its record
// out. The file is replaced atomically (temporary file, fsync, rename), so
// a crash leaves the old journal or the new one; every process reads the
// new one from its start (refresh).
func (j *journal) compact() error {
	data, err := os.ReadFile(j.path)
	if err != nil {
		return err
	}
	var pending, done [][]byte
	for line := range bytes.Lines(data) {
		var e entry
		if err := json.Unmarshal(line, &e); err != nil {
			return fmt.Errorf("%s: %s is not a journal entry: %w", j.path, line, err)
		}
		if p, ok := j.pending[e.Key]; ok && e.Intent != nil {
			if line, err = json.Marshal(p); err != nil {
				return err
			}
			pending = append(pending, append(line, '\n'))
		} else if e.Intent == nil && e.Generation == 0 {
			done = append(done, line)
		}
	}
	keep, room := len(done), j.max/2
	for keep > 0 && room >= int64(len(done[keep-1])) {
		keep--
		room -= int64(len(done[keep]))
	}
	header, err := json.Marshal(entry{Generation: j.gen + 1})
	if err != nil {
		return err
	}
	out := bytes.Join(append(append([][]byte{append(header, '\n')}, pending...), done[keep:]...), nil)
	dir, err := os.OpenRoot(filepath.Dir(j.path))
	if err != nil {
		return err
	}
	defer dir.Close()
	// The temporary file has one name: a crash mid-way leaves it for the
	// next compaction to overwrite, not a new one each time.
	tmp := atomicfile.TempName(filepath.Base(j.path), "compact")
	if err := atomicfile.WriteIn(dir, filepath.Base(j.path), tmp, out, 0o600, "files/journal-compact"); err != nil {
		return err
	}
	return j.refresh()
}

// keyTag names a key's temporary file: a crash leaves it where the
// re-issued call, with the same key, finds and reuses it.
func keyTag(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:6])
}

// change is one side effect on the tree, described before it is made.
type change struct {
	Op        string      `json:"op"`   // overwrite | append | create_new | delete
	Path      string      `json:"path"` // as the caller gave it
	Name      string      `json:"name"` // resolved, relative to the root
	Created   bool        `json:"created,omitempty"`
	Offset    int64       `json:"offset,omitempty"` // the size of the file before (write, delete)
	Perm      fs.FileMode `json:"perm,omitempty"`
	Kind      string      `json:"kind,omitempty"` // what delete removes
	Recursive bool        `json:"recursive,omitempty"`
	Tmp       string      `json:"tmp,omitempty"` // the key's temporary file
	data      []byte      // not journaled: the payload, hashed in the entry, holds it
	// Next is, for a cut-off append, the file's size when the next change
	// to it was planned: set when that change's intent is read, and
	// journaled only by compact, which drops that intent once done.
	Next *int64 `json:"next,omitempty"`
}

// point names c's kill point at stage.
func (c *change) point(stage string) string {
	if c.Op == "delete" {
		return "files.delete/" + stage
	}
	return "files.write/" + stage
}

// apply makes the change; resumed means an earlier call with the same key
// may have made part or all of it, so apply looks before it acts.
func (c *change) apply(ctx context.Context, fsys *os.Root, resumed bool) (any, error) {
	if c.Op == "delete" {
		return c.remove(ctx, fsys, resumed)
	}
	if dir := filepath.Dir(c.Name); dir != "." {
		if err := fsys.MkdirAll(dir, 0o755); err != nil {
			return nil, toolerr.FromOS("path", c.Path, err)
		}
	}
	var err error
	switch c.Op {
	case "append":
		rest := c.data
		if resumed {
			rest, err = c.unappended(fsys)
		}
		if err == nil && len(rest) > 0 {
			err = appendTo(fsys, c.Name, rest, c.Perm)
		}
	case "create_new":
		if resumed && c.created(fsys) {
			err = fsys.Remove(c.Tmp) // a crash between link and removal leaves it
			if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
			break
		}
		err = atomicfile.CreateIn(fsys, c.Name, c.Tmp, c.data, c.Perm, c.point("tmp"))
		if errors.Is(err, fs.ErrExist) {
			return nil, errExists(c.Path)
		}
	default: // overwrite: doing it again leaves the same file
		err = atomicfile.WriteIn(fsys, c.Name, c.Tmp, c.data, c.Perm, c.point("tmp"))
	}
	if err != nil {
		return nil, toolerr.FromOS("path", c.Path, err)
	}
	return map[string]any{"path": c.Path, "bytes_written": len(c.data), "created": c.Created}, nil
}

func (c *change) remove(ctx context.Context, fsys *os.Root, resumed bool) (any, error) {
	var err error
	if _, lerr := fsys.Lstat(c.Name); !resumed || !errors.Is(lerr, fs.ErrNotExist) {
		if c.Kind == "dir" && c.Recursive {
			var removed int
			if removed, err = removeTree(ctx, fsys, c.Name); ended(err) {
				return nil, fmt.Errorf("files.delete of %q stopped after removing %d entries (the same idempotency key removes the rest): %w", c.Path, removed, err)
			}
		} else {
			err = fsys.Remove(c.Name)
		}
	}
	if err != nil {
		if c.Kind == "dir" && !c.Recursive {
			return nil, toolerr.Refuse("recursive", "directory %q could not be removed (set recursive to delete a non-empty directory): %w", c.Path, err)
		}
		return nil, toolerr.FromOS("path", c.Path, err)
	}
	return map[string]any{"path": c.Path, "deleted": true, "kind": c.Kind}, nil
}

// removeTree removes name and everything under it, children first, and
// returns how many entries it removed. It checks ctx before each removal:
// a cancelled or timed-out delete of a large tree stops there instead of
// running on after the host gave up (os.Root.RemoveAll cannot be stopped),
// and leaves the call's intent pending for its re-issue to finish.
func removeTree(ctx context.Context, fsys *os.Root, name string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	err := fsys.Remove(name)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return 1, nil
	}
	info, lerr := fsys.Lstat(name)
	if lerr != nil || !info.IsDir() {
		return 0, err
	}
	// The children are removed through the directory opened here, the one
	// Lstat saw (a directory swapped for a symlink meanwhile would have
	// led the removal elsewhere in the root, as a path would).
	sub, err := fsys.OpenRoot(name)
	if err != nil {
		return 0, err
	}
	defer sub.Close()
	if now, err := sub.Stat("."); err != nil || !os.SameFile(info, now) {
		return 0, fmt.Errorf("%s changed while it was being deleted", name)
	}
	dir, err := sub.Open(".")
	if err != nil {
		return 0, err
	}
	names, err := dir.Readdirnames(-1)
	dir.Close()
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, n := range names {
		k, err := removeTree(ctx, sub, n)
		if removed += k; err != nil {
			return removed, err
		}
	}
	if err := ctx.Err(); err != nil {
		return removed, err
	}
	if err := fsys.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return removed, err
	}
	return removed + 1, nil
}

// created reports whether a cut-off create_new made its file: it exists
// with the content. Another file there is someone else's.
func (c *change) created(fsys *os.Root) bool {
	got, err := fsys.ReadFile(c.Name)
	return err == nil && bytes.Equal(got, c.data)
}

// unappended is what a cut-off append still has to write. When another
// change to the file was planned since (other runs append to a log too),
// the size the file had then says: the data was there (none), or not (all
// of it, appended now). Otherwise the file itself says: all of it if the
// file is as it was, none if the data is in place at the old end, the
// rest if the kill tore the write. Anything else is refused: no one can
// tell whether the append happened.
func (c *change) unappended(fsys *os.Root) ([]byte, error) {
	if c.Next != nil {
		switch *c.Next {
		case c.Offset + int64(len(c.data)):
			return nil, nil
		case c.Offset:
			return c.data, nil
		}
		return nil, c.changed()
	}
	f, err := fsys.Open(c.Name)
	if errors.Is(err, fs.ErrNotExist) && c.Created {
		return c.data, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	got, err := io.ReadAll(io.NewSectionReader(f, c.Offset, int64(len(c.data))))
	if err != nil {
		return nil, err
	}
	if bytes.Equal(got, c.data) {
		return nil, nil
	}
	if info, err := f.Stat(); err == nil && info.Size() == c.Offset+int64(len(got)) && bytes.HasPrefix(c.data, got) {
		return c.data[len(got):], nil
	}
	return nil, c.changed()
}

func (c *change) changed() error {
	return toolerr.Refuse("path", "path %q changed since the interrupted append with this idempotency key: cannot tell whether it happened", c.Path).
		With("path", toolerr.Shown(c.Path))
}

func appendTo(fsys *os.Root, name string, data []byte, perm os.FileMode) error {
	f, err := fsys.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, perm)
	if err != nil {
		return err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func errExists(path string) error {
	return toolerr.Refuse("path", "path %q already exists (mode create_new)", path)
}
