package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ordo-run/ordo/contracts"
)

// Load returns the records of the log at path; a missing file has none. A
// final line without its newline (a crash mid-append) is cut off the file so
// the next Append starts clean. A complete line that is not JSON is a
// CodeInternal error naming the file and line.
func Load(path string) ([]json.RawMessage, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if complete := bytes.LastIndexByte(data, '\n') + 1; complete < len(data) {
		if err := os.Truncate(path, int64(complete)); err != nil {
			return nil, err
		}
		data = data[:complete]
	}
	if len(data) == 0 {
		return nil, nil
	}
	var recs []json.RawMessage
	for n, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if !json.Valid(line) {
			return nil, contracts.Errorf(contracts.CodeInternal, "%s line %d is not JSON: the log is corrupt", path, n+1).
				With("path", path).With("line", n+1)
		}
		recs = append(recs, json.RawMessage(line))
	}
	return recs, nil
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
