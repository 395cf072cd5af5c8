package files

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/ordo-run/ordo/plugins/internal/atomicfile"
	"github.com/ordo-run/ordo/plugins/internal/idem"
	"github.com/ordo-run/ordo/plugins/internal/jsonl"
	"github.com/ordo-run/ordo/plugins/internal/safepath"
	"github.com/ordo-run/ordo/plugins/internal/toolerr"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// journalName is the idempotency journal inside the data directory.
const journalName = "files-journal.jsonl"

type plugin struct {
	root    *safepath.Root
	journal string
	guard   *idem.Guard
}

// Tools opens the root and the idempotency journal and returns the five
// files tools.
func Tools(cfg Config) ([]sdk.Tool, error) {
	root, err := safepath.Open(RootEnv, cfg.Root)
	if err != nil {
		return nil, err
	}
	p := &plugin{root: root, journal: filepath.Join(cfg.DataDir, journalName)}
	lines, err := jsonl.Load(p.journal)
	if err != nil {
		return nil, err
	}
	recs := make([]idem.Record, len(lines))
	for i, line := range lines {
		if err := json.Unmarshal(line, &recs[i]); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", p.journal, i+1, err)
		}
	}
	p.guard = idem.NewGuard(recs)
	return []sdk.Tool{
		{Contract: readContract, Handler: p.read},
		{Contract: writeContract, Handler: p.keyed(p.write)},
		{Contract: listContract, Handler: p.list},
		{Contract: searchContract, Handler: p.search},
		{Contract: deleteContract, Handler: p.keyed(p.remove)},
	}, nil
}

// keyed runs a side effect under the idempotency guard and journals its
// record right after the effect. (The effect and the journal line are two
// writes: a crash between them lets a retry repeat the effect once, which
// for an overwrite or a delete leaves the same end state.)
func (p *plugin) keyed(effect func(ctx context.Context, call sdk.Call) (any, error)) sdk.Handler {
	return func(ctx context.Context, call sdk.Call) (any, error) {
		return p.guard.Do(call.Tool, call.IdempotencyKey, call.Payload, func(s idem.Stamp) (idem.Record, error) {
			result, err := effect(ctx, call)
			if err != nil {
				return idem.Record{}, err
			}
			rec, err := s.Record(result)
			if err == nil && s.Keyed() {
				err = jsonl.Append(p.journal, rec)
			}
			return rec, err
		})
	}
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
	f, err := p.root.FS().Open(name)
	if err != nil {
		return nil, toolerr.FromOS("path", in.Path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, toolerr.FromOS("path", in.Path, err)
	}
	if !info.Mode().IsRegular() {
		return nil, toolerr.Refuse("path", "path %q is not a regular file", in.Path)
	}
	data, err := io.ReadAll(io.LimitReader(f, min(in.MaxBytes, maxMaxBytes)))
	if err != nil {
		return nil, toolerr.FromOS("path", in.Path, err)
	}
	truncated := int64(len(data)) < info.Size()
	content, encoding := string(data), "utf-8"
	if truncated { // do not split the last rune
		for i := 0; i < utf8.UTFMax && len(content) > 0 && !utf8.ValidString(content); i++ {
			content = content[:len(content)-1]
		}
	}
	if !utf8.ValidString(content) {
		content, encoding = base64.StdEncoding.EncodeToString(data), "base64"
	}
	return map[string]any{"path": in.Path, "content": content, "encoding": encoding, "size": info.Size(), "truncated": truncated}, nil
}

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
	fsys := p.root.FS()
	info, statErr := fsys.Stat(name)
	created := errors.Is(statErr, fs.ErrNotExist)
	switch {
	case statErr != nil && !created:
		return nil, toolerr.FromOS("path", in.Path, statErr)
	case !created && !info.Mode().IsRegular():
		return nil, toolerr.Refuse("path", "path %q exists and is not a regular file", in.Path)
	case !created && in.Mode == "create_new":
		return nil, toolerr.Refuse("path", "path %q already exists (mode create_new)", in.Path)
	}
	if dir := filepath.Dir(name); dir != "." {
		if err := fsys.MkdirAll(dir, 0o755); err != nil {
			return nil, toolerr.FromOS("path", in.Path, err)
		}
	}
	perm := os.FileMode(0o644)
	if !created {
		perm = info.Mode().Perm()
	}
	if in.Mode == "append" {
		err = appendTo(fsys, name, data, perm)
	} else {
		err = atomicfile.WriteIn(fsys, name, data, perm)
	}
	if err != nil {
		return nil, toolerr.FromOS("path", in.Path, err)
	}
	return map[string]any{"path": in.Path, "bytes_written": len(data), "created": created}, nil
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
	truncated := false
	err = fs.WalkDir(p.root.FS().FS(), start, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if name == start {
			return nil
		}
		if in.Pattern == "" || matches(in.Pattern, d.Name()) {
			if len(entries) == in.MaxEntries {
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
	fsys := p.root.FS()
	info, err := fsys.Lstat(name)
	if err != nil {
		return nil, toolerr.FromOS("path", in.Path, err)
	}
	if info.IsDir() && in.Recursive {
		err = fsys.RemoveAll(name)
	} else {
		err = fsys.Remove(name)
	}
	if err != nil {
		if info.IsDir() && !in.Recursive {
			return nil, toolerr.Refuse("recursive", "directory %q could not be removed (set recursive to delete a non-empty directory): %w", in.Path, err)
		}
		return nil, toolerr.FromOS("path", in.Path, err)
	}
	return map[string]any{"path": in.Path, "deleted": true, "kind": kind(info.Mode().Type())}, nil
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

// walkError keeps a cancelled context's error (the SDK maps it to a
// timeout) and reports the rest against the path.
func walkError(name string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return toolerr.FromOS("path", name, err)
}
