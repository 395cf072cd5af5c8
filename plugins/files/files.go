package files

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"io/fs"
	"path"
	"path/filepath"
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
	root    *safepath.Root
	lock    *filelock.Mutex
	journal *journal
}

// Tools opens the root and the idempotency journal and returns the five
// files tools.
func Tools(cfg Config) ([]sdk.Tool, error) {
	root, err := safepath.Open(RootEnv, cfg.Root)
	if err != nil {
		return nil, err
	}
	root.Hide(cfg.DataDir)
	if plugins := filepath.Dir(cfg.DataDir); filepath.Base(plugins) == "plugins" { // the host's <data_dir>/plugins/files
		root.Hide(filepath.Dir(plugins))
	}
	lock, err := filelock.Open(filepath.Join(cfg.DataDir, lockName))
	if err != nil {
		return nil, err
	}
	p := &plugin{root: root, lock: lock, journal: newJournal(filepath.Join(cfg.DataDir, journalName))}
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

func (p *plugin) write(_ context.Context, call sdk.Call) (any, error) {
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
	return p.perform(call, data, func() (*change, error) {
		info, err := p.root.FS().Stat(name)
		created := errors.Is(err, fs.ErrNotExist)
		switch {
		case err != nil && !created:
			return nil, toolerr.FromOS("path", in.Path, err)
		case !created && !info.Mode().IsRegular():
			return nil, toolerr.Refuse("path", "path %q exists and is not a regular file", in.Path)
		case !created && in.Mode == "create_new":
			return nil, errExists(in.Path)
		}
		c := &change{Op: cmp.Or(in.Mode, "overwrite"), Path: in.Path, Name: name, Created: created, Perm: 0o644}
		if !created {
			c.Perm, c.Offset = info.Mode().Perm(), info.Size()
		}
		return c, nil
	})
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
	err = p.walk(ctx, start, func(name string, d fs.DirEntry) error {
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

func (p *plugin) remove(_ context.Context, call sdk.Call) (any, error) {
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
	return p.perform(call, nil, func() (*change, error) {
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

// walk walks the tree under start in lexical order, skipping what the root
// hides and stopping at the first error or when ctx ends.
func (p *plugin) walk(ctx context.Context, start string, fn func(name string, d fs.DirEntry) error) error {
	return fs.WalkDir(p.root.FS().FS(), start, func(name string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case ctx.Err() != nil:
			return ctx.Err()
		case p.root.Hidden(name) && d.IsDir():
			return fs.SkipDir
		case p.root.Hidden(name):
			return nil
		}
		return fn(name, d)
	})
}

// walkError keeps a cancelled context's error (the SDK maps it to a
// timeout) and reports the rest against the path.
func walkError(name string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return toolerr.FromOS("path", name, err)
}
