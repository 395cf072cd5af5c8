package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ordo-run/ordo/contracts"
)

// Follower reads a log from where it last stopped, so that a process sees
// the records other processes appended since. Every process appending to
// the log, and every Follower reading it, must hold the same cross-process
// lock (filelock): a line without its newline is then a torn append by a
// process that died, never one being written.
type Follower struct {
	path  string
	off   int64 // bytes of complete lines read so far
	lines int   // complete lines read so far
}

// Follow starts reading the log at path from its beginning.
func Follow(path string) *Follower { return &Follower{path: path} }

// Next returns the records appended since the last call; a missing file
// has none. A final line without its newline is cut off the file so the
// next Append starts clean. A complete line that is not JSON is a
// CodeInternal error naming the file and line, and a log that shrank
// (rewritten or replaced behind the plugin's back) is one too.
func (f *Follower) Next() ([]json.RawMessage, error) {
	file, err := os.OpenFile(f.path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, f.shrank(0)
	}
	if err != nil {
		return nil, err
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, err
	}
	if err := f.shrank(info.Size()); err != nil || info.Size() == f.off {
		return nil, err
	}
	data, err := io.ReadAll(io.NewSectionReader(file, f.off, info.Size()-f.off))
	if err != nil {
		return nil, err
	}
	if complete := bytes.LastIndexByte(data, '\n') + 1; complete < len(data) {
		if err := file.Truncate(f.off + int64(complete)); err != nil {
			return nil, err
		}
		data = data[:complete]
	}
	var recs []json.RawMessage
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		if !json.Valid(line) {
			return nil, contracts.Errorf(contracts.CodeInternal, "%s line %d is not JSON: the log is corrupt", f.path, f.lines+1).
				With("path", f.path).With("line", f.lines+1)
		}
		recs = append(recs, json.RawMessage(line))
		f.off += int64(len(line) + 1)
		f.lines++
		data = rest
	}
	return recs, nil
}

// Size is the length of the log's complete lines read so far: the file's
// size as of the last Next.
func (f *Follower) Size() int64 { return f.off }

func (f *Follower) shrank(size int64) error {
	if size >= f.off {
		return nil
	}
	return contracts.Errorf(contracts.CodeInternal, "%s shrank from %d to %d bytes: it was changed outside the plugin", f.path, f.off, size).
		With("path", f.path)
}

// Append adds rec as one line to the log at path (created 0600 if missing)
// and fsyncs it, and the directory too when the file is new.
func Append(path string, rec any) error {
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if _, err = f.Write(append(line, '\n')); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil || statErr == nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
