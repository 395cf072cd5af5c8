package files

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"io/fs"
	"math"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/internal/filelock"
	"github.com/ordo-run/ordo/plugins/internal/jsonsize"
	"github.com/ordo-run/ordo/plugins/internal/safepath"
	"github.com/ordo-run/ordo/plugins/internal/toolerr"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// journalName is the idempotency journal inside the data directory, and
// lockName the lock every process using that directory takes to change the
// root or the journal.
const (
	journalName = "files-journal.jsonl"
	lockName    = "files.lock"
)

type plugin struct {
	root     *safepath.Root
	maxBytes int64 // Config.MaxBytes
	lock     *filelock.Mutex
	journal  *journal
}

// Tools opens the root and the idempotency journal and returns the five
// files tools.
func Tools(cfg Config) ([]sdk.Tool, error) {
	root, err := safepath.Open(RootEnv, cfg.Root)
	if err != nil {
		return nil, err
	}
	root.HideOrdo(cfg.DataDir)
	if cfg.AllowHardLinks {
		root.AllowHardLinks()
	}
	lock, err := filelock.Open(filepath.Join(cfg.DataDir, lockName))
	if err != nil {
		return nil, err
	}
	p := &plugin{root: root, maxBytes: cfg.MaxBytes, lock: lock, journal: newJournal(filepath.Join(cfg.DataDir, journalName), cmp.Or(cfg.journalMax, journalMaxBytes))}
	if err := p.locked(p.journal.refresh); err != nil {
		return nil, err
	}
	return []sdk.Tool{
		{Contract: readContract, Handler: p.read},
		{Contract: writeContract, Handler: p.write},
		{Contract: listContract, Handler: p.list},
		{Contract: searchContract, Handler: p.search},
		{Contract: deleteContract, Handler: p.remove},
	}, nil
}

// locked runs f holding the lock.
func (p *plugin) locked(f func() error) error {
	if err := p.lock.Lock(); err != nil {
		return err
	}
	defer p.lock.Unlock()
	return f()
}

type readIn struct {
	Path     string `json:"path"`
	MaxBytes int64  `json:"max_bytes"`
}

func (p *plugin) read(_ context.Context, call sdk.Call) (any, error) {
	var in readIn
	if err := call.Decode(&in); err != nil {
		return nil, err
	}
	if in.MaxBytes == 0 {
		in.MaxBytes = defaultMaxBytes
	}
	name, err := p.root.Resolve("path", in.Path)
	if err != nil {
		return nil, err
	}
	f, info, err := p.root.OpenRegular("path", in.Path, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, min(in.MaxBytes, maxMaxBytes)))
	if err != nil {
		return nil, toolerr.FromOS("path", in.Path, err)
	}
	content, encoding := string(data), "utf-8"
	if int64(len(data)) < info.Size() { // do not split the last rune
		for i := 0; i < utf8.UTFMax && len(content) > 0 && !utf8.ValidString(content); i++ {
			content = content[:len(content)-1]
		}
	}
	n := 0 // the file's bytes the answer holds
	if utf8.ValidString(content) {
		content = jsonsize.Prefix(content, maxAnswerJSON)
		n = len(content)
	} else {
		data = data[:min(len(data), maxAnswerJSON/4*3)]
		content, encoding, n = base64.StdEncoding.EncodeToString(data), "base64", len(data)
	}
	truncated := int64(n) < info.Size()
	return map[string]any{"path": in.Path, "content": content, "encoding": encoding, "size": info.Size(), "truncated": truncated}, nil
}

// maxAnswerJSON bounds the text of an answer as JSON (files.read's content,
// the paths files.list and files.search return): the host takes at most
// contracts.MaxMessageBytes for the whole answer, and 16 MiB of text (or
// 4 MiB of "<", 6 bytes each in JSON, or 12 MiB as base64) did not fit.
const maxAnswerJSON = contracts.MaxMessageBytes - 64<<10

// entryJSON is about what an entry of files.list or files.search takes as
// JSON besides its path and text.
const entryJSON = 100

type writeIn struct {
	Path     string `json:"path"`
	Content  string `json:"content"`
	Encoding string `json:"encoding"`
	Mode     string `json:"mode"`
}

func (p *plugin) write(ctx context.Context, call sdk.Call) (any, error) {
	var in writeIn
	if err := call.Decode(&in); err != nil {
		return nil, err
	}
	data := []byte(in.Content)
	if in.Encoding == "base64" {
		var err error
		if data, err = base64.StdEncoding.DecodeString(in.Content); err != nil {
			return nil, toolerr.Refuse("content", "content is not valid base64: %w", err)
		}
	}
	name, err := p.root.Resolve("path", in.Path)
	if err != nil {
		return nil, err
	}
	if name == "." {
		return nil, toolerr.Refuse("path", "path %q is the root directory", in.Path)
	}
	return p.perform(ctx, call, data, func() (*change, error) {
		info, err := p.root.FS().Stat(name)
		created := errors.Is(err, fs.ErrNotExist)
		switch {
		case err != nil && !created:
			return nil, toolerr.FromOS("path", in.Path, err)
		case !created && !info.Mode().IsRegular():
			return nil, toolerr.Refuse("path", "path %q exists and is not a regular file", in.Path)
		case !created && in.Mode == "create_new":
			return nil, errExists(in.Path)
		case !created && in.Mode == "append":
			if err := p.root.Linked("path", in.Path, info); err != nil {
				return nil, err
			}
		}
		c := &change{Op: cmp.Or(in.Mode, "overwrite"), Path: in.Path, Name: name, Created: created, Perm: 0o644}
		if !created {
			c.Perm, c.Offset = info.Mode().Perm(), info.Size()
		}
		return c, p.fits(ctx, c, int64(len(data)))
	})
}

// fits refuses (field content) change c, writing n bytes, when it would
// grow the files under the root past maxBytes. The root is measured each
// time, by a walk: other processes, and people, change it too.
func (p *plugin) fits(ctx context.Context, c *change, n int64) error {
	grows := n
	if c.Op == "overwrite" {
		grows -= c.Offset
	}
	if p.maxBytes == 0 || grows <= 0 {
		return nil
	}
	var used int64
	err := p.walk(ctx, ".", measure, func(_ string, d fs.DirEntry) error {
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err == nil {
				used += info.Size()
			}
		}
		return nil
	})
	if err != nil {
		return walkError(".", err)
	}
	if used+grows > p.maxBytes {
		return toolerr.Refuse("content", "the write would bring the files under the root to %d bytes, over the limit of %d (bundled.files.max_bytes)", used+grows, p.maxBytes).
			With("limit", p.maxBytes).With("used", used)
	}
	return nil
}

type listIn struct {
	Path       string `json:"path"`
	Recursive  bool   `json:"recursive"`
	Pattern    string `json:"pattern"`
	MaxEntries int    `json:"max_entries"`
}

func (p *plugin) list(ctx context.Context, call sdk.Call) (any, error) {
	in := listIn{Path: ".", MaxEntries: 1000}
	if err := call.Decode(&in); err != nil {
		return nil, err
	}
	if _, err := path.Match(in.Pattern, ""); err != nil {
		return nil, toolerr.Refuse("pattern", "pattern %q is not a valid glob: %w", in.Pattern, err)
	}
	start, err := p.dir("path", in.Path)
	if err != nil {
		return nil, err
	}
	entries := []map[string]any{}
	truncated, size := false, 0
	pick := picker{
		keep: func(d fs.DirEntry) (bool, bool) {
			listed := in.Pattern == "" || matches(in.Pattern, d.Name())
			return listed || (in.Recursive && d.IsDir()), listed
		},
		room: func() int { return in.MaxEntries - len(entries) },
	}
	err = p.walk(ctx, start, pick, func(name string, d fs.DirEntry) error {
		if name == start {
			return nil
		}
		if in.Pattern == "" || matches(in.Pattern, d.Name()) {
			if size += jsonsize.Len(name) + entryJSON; len(entries) == in.MaxEntries || size > maxAnswerJSON {
				truncated = true
				return fs.SkipAll
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			entries = append(entries, map[string]any{
				"path": name, "type": kind(d.Type()), "size": info.Size(),
				"modified": info.ModTime().UTC().Format(time.RFC3339),
			})
		}
		if d.IsDir() && !in.Recursive {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, walkError(in.Path, err)
	}
	return map[string]any{"path": in.Path, "files": entries, "truncated": truncated}, nil
}

type deleteIn struct {
	Path      string `json:"path"`
	Recursive bool   `json:"recursive"`
}

func (p *plugin) remove(ctx context.Context, call sdk.Call) (any, error) {
	var in deleteIn
	if err := call.Decode(&in); err != nil {
		return nil, err
	}
	name, err := p.root.Resolve("path", in.Path)
	if err != nil {
		return nil, err
	}
	if name == "." {
		return nil, toolerr.Refuse("path", "path %q is the root directory, which cannot be deleted", in.Path)
	}
	if p.root.Holds(name) {
		return nil, toolerr.Refuse("path", "path %q holds Ordo's own data directory, which the tools may not touch", in.Path).With("path", toolerr.Shown(in.Path))
	}
	return p.perform(ctx, call, nil, func() (*change, error) {
		info, err := p.root.FS().Lstat(name)
		if err != nil {
			return nil, toolerr.FromOS("path", in.Path, err)
		}
		return &change{Op: "delete", Path: in.Path, Name: name, Kind: kind(info.Mode().Type()), Recursive: in.Recursive, Offset: info.Size()}, nil
	})
}

// dir resolves a directory argument and checks that it is one.
func (p *plugin) dir(field, name string) (string, error) {
	clean, err := p.root.Resolve(field, name)
	if err != nil {
		return "", err
	}
	info, err := p.root.FS().Stat(clean)
	if err != nil {
		return "", toolerr.FromOS(field, name, err)
	}
	if !info.IsDir() {
		return "", toolerr.Refuse(field, "%s %q is not a directory", field, name)
	}
	return filepath.ToSlash(clean), nil
}

func matches(pattern, name string) bool {
	ok, _ := path.Match(pattern, name) // pattern checked by the caller
	return ok
}

func kind(t fs.FileMode) string {
	switch {
	case t.IsDir():
		return "dir"
	case t&fs.ModeSymlink != 0:
		return "symlink"
	case t.IsRegular():
		return "file"
	default:
		return "other"
	}
}

// picker says which entries of a directory a walk wants (keep) and
// which of those count against room, the entries the caller can still
// take: a directory is read until more than room of its entries count.
// A walk that passes an unreadable directory fails, unless unreadable is
// set: then the directory counts as empty.
type picker struct {
	keep       func(d fs.DirEntry) (keep, counts bool)
	room       func() int
	unreadable bool
}

// every is the picker of a walk that wants the whole tree, and measure of
// one that sizes it: a directory the plugin may not read (another user's,
// in a root set to a home directory) holds nothing it wrote.
var (
	every = picker{
		keep: func(fs.DirEntry) (bool, bool) { return true, false },
		room: func() int { return math.MaxInt },
	}
	measure = picker{keep: every.keep, room: every.room, unreadable: true}
)

// walk visits the tree under start depth-first, each directory's entries
// in lexical order, skipping what the root hides and stopping at the first
// error or when ctx ends. fn may return fs.SkipDir for a directory (not
// entered) and fs.SkipAll. A directory is read in chunks (readDir), and
// only the entries pick keeps are visited.
func (p *plugin) walk(ctx context.Context, start string, pick picker, fn func(name string, d fs.DirEntry) error) error {
	info, err := p.root.FS().Stat(start)
	if err == nil {
		err = p.visit(ctx, start, fs.FileInfoToDirEntry(info), pick, fn)
	}
	if errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}

func (p *plugin) visit(ctx context.Context, name string, d fs.DirEntry, pick picker, fn func(name string, d fs.DirEntry) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if p.root.Hidden(name) {
		return nil
	}
	if err := fn(name, d); err != nil || !d.IsDir() {
		return skipped(err)
	}
	entries, err := p.readDir(ctx, name, pick)
	if pick.unreadable && errors.Is(err, fs.ErrPermission) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := p.visit(ctx, path.Join(name, e.Name()), e, pick, fn); err != nil {
			return err
		}
	}
	return nil
}

// skipped is err with fs.SkipDir, which only stops the directory it was
// returned for, taken as done.
func skipped(err error) error {
	if errors.Is(err, fs.SkipDir) {
		return nil
	}
	return err
}

// dirChunk is how many entries a walk reads from a directory at a time.
const dirChunk = 1024

// readDir reads directory name's entries that pick keeps, sorted by name.
// It reads in chunks of at most dirChunk and stops once more than
// pick.room() of them count: listing 10 entries of a directory of 100,000
// read and sorted all of them first (648 times the cost of 10 of 100, an
// lstat and a FileInfo each under an os.Root; BenchmarkList10).
func (p *plugin) readDir(ctx context.Context, name string, pick picker) ([]fs.DirEntry, error) {
	f, err := p.root.FS().Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	room, counted := pick.room(), 0
	var kept []fs.DirEntry
	for counted <= room {
		n := dirChunk // each entry read costs an lstat under an os.Root: read no more than can count
		if left := room - counted; left < n {
			n = left + 1
		}
		chunk, err := f.ReadDir(n)
		for _, d := range chunk {
			keep, counts := pick.keep(d)
			if keep {
				kept = append(kept, d)
			}
			if counts {
				counted++
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(kept, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return kept, nil
}

// walkError keeps a cancelled context's error (the SDK maps it to a
// timeout) and reports the rest against the path.
func walkError(name string, err error) error {
	if ended(err) {
		return err
	}
	return toolerr.FromOS("path", name, err)
}

// ended reports whether err is a call's context ending (cancelled or timed
// out), which the SDK reports, not a fault of the path.
func ended(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
