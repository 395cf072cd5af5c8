package memory

import (
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// Entry is what a store appends to a run's log for one Save, encoded. A
// whole entry's Data is its Snap inside the entry's wrapper: Head(), Snap
// and "}" (a store may send the snapshot once and join the entry itself).
type Entry struct {
	Data  []byte // the encoded contracts.RunDelta, format contracts.RunFormatVersion
	Whole bool   // Data carries the whole run (then Snap is that run, encoded as a checkpoint)
	Snap  []byte // the whole run as a checkpoint (EncodeRun), when Whole or when a snapshot was asked for
}

// NewEntry encodes the entry Save appends for run: run.Delta(), or a
// whole-run entry when the run is new to the store (Seq 1, whatever its
// log mark says) or was never logged. A whole entry comes with its Snap;
// AddSnapshot gives a delta one.
func NewEntry(run *contracts.Run) (Entry, error) {
	if run.Seq != 1 {
		data, whole, err := run.AppendDelta(make([]byte, 0, 512))
		if err != nil {
			return Entry{}, contracts.Errorf(contracts.CodeInvalidInput, "encode run %q entry %d: %w", run.ID, run.Seq, err).With("field", "run")
		}
		if !whole {
			return Entry{Data: data}, nil
		}
	}
	return wholeOf(run)
}

// Head is the wrapper a whole entry's Data holds before its Snap (nil for
// a delta entry).
func (e Entry) Head() []byte {
	if !e.Whole {
		return nil
	}
	return e.Data[:len(e.Data)-len(e.Snap)-1]
}

// AddSnapshot encodes run, whose entry e is, as e's snapshot.
func (e *Entry) AddSnapshot(run *contracts.Run) error {
	if e.Snap != nil {
		return nil
	}
	snap, err := EncodeRun(run)
	e.Snap = snap
	return err
}

// wholeEntry is the shape of a whole-run log entry around a checkpoint
// kept as it was written.
type wholeEntry struct {
	Seq       int64           `json:"seq"`
	UpdatedAt time.Time       `json:"updated_at"`
	Run       json.RawMessage `json:"run"`
}

// WholeEntry wraps a checkpoint (in whatever format version it was
// written) as a whole-run log entry numbered seq. In the current format
// the result is exactly what NewEntry writes for a whole run; an entry
// around an older checkpoint is stored with that checkpoint's format
// version and read back by DecodeLogEntry.
func WholeEntry(checkpoint []byte, seq int64, updated time.Time) ([]byte, error) {
	data, err := json.Marshal(wholeEntry{Seq: seq, UpdatedAt: updated, Run: checkpoint})
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "encode whole-run entry %d: %w", seq, err).With("field", "run")
	}
	return data, nil
}

// wholeOf is the whole-run entry of run: the checkpoint EncodeRun writes,
// already compact and escaped as json.Marshal would write it, encoded once
// inside the entry's wrapper, its Snap the same bytes (a run may hold
// 64 MiB: not encoded twice, nor copied).
func wholeOf(run *contracts.Run) (Entry, error) {
	at, err := run.UpdatedAt.MarshalJSON()
	if err != nil {
		return Entry{}, contracts.Errorf(contracts.CodeInvalidInput, "encode whole-run entry %d: %w", run.Seq, err).With("field", "run")
	}
	data := make([]byte, 0, len(at)+48)
	data = append(data, `{"seq":`...)
	data = strconv.AppendInt(data, run.Seq, 10)
	data = append(data, `,"updated_at":`...)
	data = append(data, at...)
	data = append(data, `,"run":`...)
	start := len(data)
	if data, err = appendRun(data, run); err != nil {
		return Entry{}, err
	}
	end := len(data)
	data = append(data, '}')
	return Entry{Data: data, Whole: true, Snap: data[start:end:end]}, nil
}

// DecodeLogEntry reads a stored log entry of format version. Entries in
// the current format are DecodeEntry's; an entry stored with an older
// version can only be a whole-run entry around a checkpoint an older build
// wrote (imported, or migrated from a store that kept only checkpoints),
// and its run is upgraded as DecodeRun upgrades a checkpoint.
func DecodeLogEntry(data []byte, version int) (*contracts.RunDelta, error) {
	if version >= 1 {
		return DecodeEntry(data, version)
	}
	var w wholeEntry
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, formatError(version, err)
	}
	if len(w.Run) == 0 || string(w.Run) == "null" {
		return nil, formatError(version, contracts.Errorf(contracts.CodeCheckpointFormat, "log entry %d in format %d is not a whole run", w.Seq, version))
	}
	run, err := DecodeRun(w.Run, version)
	if err != nil {
		return nil, err
	}
	return &contracts.RunDelta{Seq: w.Seq, UpdatedAt: w.UpdatedAt, Run: run}, nil
}

// StoredEntry is a log entry as a store holds it.
type StoredEntry struct {
	Seq     int64
	Version int
	Data    []byte
}

// FoldSnapshot rebuilds a run from its snapshot (a checkpoint of format
// version) and the log entries after it, in order.
func FoldSnapshot(snap []byte, version int, tail []StoredEntry) (*contracts.Run, error) {
	run, err := DecodeRun(snap, version)
	if err != nil {
		return nil, err
	}
	for _, e := range tail {
		d, err := DecodeLogEntry(e.Data, e.Version)
		if err != nil {
			return nil, err
		}
		if err := run.Apply(d); err != nil {
			return nil, err
		}
	}
	return run, nil
}

// DecodeLog decodes stored entries for Checkpointer.Log.
func DecodeLog(stored []StoredEntry) ([]contracts.RunDelta, error) {
	out := make([]contracts.RunDelta, 0, len(stored))
	for _, e := range stored {
		d, err := DecodeLogEntry(e.Data, e.Version)
		if err != nil {
			return nil, err
		}
		out = append(out, *d)
	}
	return out, nil
}

// Row is a database row to scan: database/sql's and pgx's alike.
type Row interface {
	Scan(dest ...any) error
}

// LogOf is Log's answer for a database store that read stored, the
// entries asked for: when there are none, exists (a query of whether the
// runs table holds the run) tells an empty answer from an unknown run.
func LogOf(id string, stored []StoredEntry, exists func() Row) ([]contracts.RunDelta, error) {
	if len(stored) == 0 {
		var ok bool
		if err := exists().Scan(&ok); err != nil {
			return nil, StoreError("read run log", err)
		}
		if !ok {
			return nil, NotFound(id)
		}
	}
	return DecodeLog(stored)
}

// TailSizes remembers, per run, the bytes a store logged since the run's
// last snapshot and that snapshot's size, as of the run's last sequence,
// so that Save can apply NeedSnapshot (and encode the snapshot outside the
// store's critical section) without reading the store first. It is a
// cache: a store that finds no entry for the sequence before the one it
// saves reads the figures from its own rows. Safe for concurrent use.
type TailSizes struct {
	mu   sync.Mutex
	runs map[string]TailSize
}

// TailSize is one run's entry in TailSizes.
type TailSize struct {
	Seq        int64 // the sequence the figures hold at
	Tail, Snap int64 // bytes logged since the snapshot; the snapshot's bytes
}

// tailSizesMax bounds the cache; past it the cache starts over.
const tailSizesMax = 1 << 14

// Get returns the figures of run id as of sequence seq.
func (t *TailSizes) Get(id string, seq int64) (TailSize, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.runs[id]
	return s, ok && s.Seq == seq
}

// Set records the figures of run id; a final run is forgotten.
func (t *TailSizes) Set(id string, s TailSize, final bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if final {
		delete(t.runs, id)
		return
	}
	if t.runs == nil || len(t.runs) >= tailSizesMax {
		t.runs = map[string]TailSize{}
	}
	t.runs[id] = s
}

// Next is the figures after appending e to a run whose figures were s.
func (s TailSize) Next(seq int64, e Entry) TailSize {
	if e.Snap != nil {
		return TailSize{Seq: seq, Snap: int64(len(e.Snap))}
	}
	return TailSize{Seq: seq, Tail: s.Tail + int64(len(e.Data)), Snap: s.Snap}
}

// Due says whether appending e to run, whose figures before it are s,
// should also write a snapshot: NeedSnapshot, with e counted in the tail.
func (s TailSize) Due(run *contracts.Run, e Entry) bool {
	return e.Snap != nil || NeedSnapshot(run, s.Tail+int64(len(e.Data)), s.Snap)
}
