package recommender

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"iter"
	"math"
	"os"
	"path/filepath"

	"github.com/ordo-run/ordo/contracts"
)

// The index file (Options.Dir/ordo-tools.index) is how a persisted index
// comes back in well under a second at 50k tools: one file of frames, each
// a batch of tools with everything a start needs (contract, vectors,
// quantised meaning vectors, the lexical index's words as term ids), so a
// start neither embeds nor tokenises. chromem-go's own persistence writes
// and reads one gob file per document (50,000 files, seconds); the
// collection is rebuilt in memory from this file instead.
//
// Every write (an Upsert that changed something, a Remove) appends one
// frame, so re-indexing one tool writes about two kilobytes; once more
// than half of the file's records are dead (replaced or removed tools) it
// is rewritten with only the live tools (a new file renamed over the old). A frame is its length,
// a CRC-32C of its body, then the gob-encoded body: a torn or damaged tail
// (a crash mid-append) is cut off on the next start and its tools are
// re-embedded when the catalog offers them again.
const (
	indexFileName = "ordo-tools.index"
	indexMagic    = "ORDOIDX\x00"
	// indexFormat changes when the frame layout or the tokenisation of
	// stored words (recommender/tokenize) changes: a file of another format
	// is dropped and rebuilt from the catalog.
	// Format 3 added each tool's contract hash (storedTool.Sum); format 4
	// indexes a word at most MaxRepeats times per field (fieldWords).
	indexFormat = 4
	// frameTools bounds a frame, so a start decodes (and holds) one small
	// frame of a large index at a time (at 4,096 the frames' encoding
	// alone raised a 50k build's peak RSS by about 45 MB).
	frameTools = 1024
	// compactMin: fewer records are not worth compacting.
	compactMin = 1024
	// maxDim bounds a stored dimension (embedding models stay far below).
	maxDim = 1 << 16
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// frame is one batch of the index file.
type frame struct {
	Format   int
	Identity string // the embedder of Vectors
	Dim      int
	Semantic string // Options.Semantic's identity ("" without one)
	SemDim   int
	Vocab    []string // the terms the batch's tools use
	Tools    []storedTool
	Vectors  []byte // len(Tools) x Dim float32, little endian
	Sem      []byte // len(Tools) x SemDim int8 (empty without Semantic)
	Removed  []string
}

// storedTool is one tool of a frame; its vectors are the frame's rows of
// the same index.
type storedTool struct {
	Contract contracts.Contract
	Sum      string      // contracts.Contract.Hash, so a start compares re-offers without hashing
	Hash     string      // fields.hash of the indexed text
	Terms    [3][]uint32 // name, description, parameter words, as Vocab indexes
	SemScale float32     // one int8 step of its meaning vector (0: none)
}

// indexFile appends frames to the index file and compacts it.
type indexFile struct {
	path    string
	f       *os.File
	records int // tool records and removals in the file, live or not
}

// openIndexFile replays every frame of dir's index file (creating the
// file) through replay, in file order, and leaves the file open for
// appends. damaged says why a tail was cut off (nil: none was); a file of
// another format is emptied.
func openIndexFile(dir string, replay func(*frame) error) (x *indexFile, damaged, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	path := filepath.Join(dir, indexFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, err
	}
	x = &indexFile{path: path, f: f}
	good, damaged := x.readFrames(bufio.NewReaderSize(f, 1<<16), replay)
	if err = f.Truncate(good); err == nil && good == 0 {
		_, err = f.WriteString(indexMagic)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return x, damaged, nil
}

// readFrames replays frames until the end or the first damaged one; good
// is the offset after the last good frame (0: empty, or not an index file
// of this format).
func (x *indexFile) readFrames(r *bufio.Reader, replay func(*frame) error) (good int64, err error) {
	magic := make([]byte, len(indexMagic))
	if _, err := io.ReadFull(r, magic); err != nil {
		if errors.Is(err, io.EOF) {
			return 0, nil
		}
		return 0, err
	}
	if string(magic) != indexMagic {
		return 0, errors.New("not an index file")
	}
	good = int64(len(indexMagic))
	for {
		body, n, err := readFrame(r)
		if errors.Is(err, io.EOF) {
			return good, nil
		}
		if err != nil {
			return good, err
		}
		var fr frame
		if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&fr); err != nil {
			return good, fmt.Errorf("decode frame: %w", err)
		}
		if fr.Format != indexFormat {
			// Another version's file: start over (its tools are
			// re-embedded as the catalog offers them).
			return 0, fmt.Errorf("format %d, want %d", fr.Format, indexFormat)
		}
		if err := fr.check(); err != nil {
			return good, err
		}
		if err := replay(&fr); err != nil {
			return good, err
		}
		x.records += len(fr.Tools) + len(fr.Removed)
		good += n
	}
}

// readFrame reads one frame's body and says how many bytes it took.
func readFrame(r *bufio.Reader) ([]byte, int64, error) {
	size, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, 0, err // io.EOF only between frames
	}
	var sum [4]byte
	if _, err := io.ReadFull(r, sum[:]); err != nil {
		return nil, 0, fmt.Errorf("torn frame: %w", err)
	}
	// Read what is there rather than trust the length: a damaged length
	// must not allocate gigabytes.
	body, err := io.ReadAll(io.LimitReader(r, int64(min(size, 1<<40))))
	if err == nil && uint64(len(body)) != size {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, 0, fmt.Errorf("torn frame: %w", err)
	}
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(sum[:]) {
		return nil, 0, errors.New("frame checksum mismatch")
	}
	return body, int64(binary.PutUvarint(make([]byte, binary.MaxVarintLen64), size)) + 4 + int64(size), nil
}

// check refuses a frame whose parts do not fit together, before any of it
// is applied.
func (fr *frame) check() error {
	n := len(fr.Tools)
	if fr.Dim < 0 || fr.SemDim < 0 || fr.Dim > maxDim || fr.SemDim > maxDim ||
		len(fr.Vectors) != n*fr.Dim*4 || len(fr.Sem) != n*fr.SemDim {
		return errors.New("frame vectors do not match its tools")
	}
	for _, st := range fr.Tools {
		if st.Contract.Tool == "" {
			return errors.New("frame tool without a name")
		}
		for _, ids := range st.Terms {
			for _, id := range ids {
				if int(id) >= len(fr.Vocab) {
					return errors.New("frame term out of range")
				}
			}
		}
	}
	return nil
}

// vectors decodes the frame's vectors into one array (each tool's is a
// capped slice of it) and its meaning vectors.
func (fr *frame) vectors() (vecs []float32, sems []int8) {
	vecs = make([]float32, len(fr.Vectors)/4)
	for i := range vecs {
		vecs[i] = math.Float32frombits(binary.LittleEndian.Uint32(fr.Vectors[i*4:]))
	}
	sems = make([]int8, len(fr.Sem))
	for i, b := range fr.Sem {
		sems[i] = int8(b)
	}
	return vecs, sems
}

// appendFrames writes frames at the end of the file, one at a time.
func (x *indexFile) appendFrames(frs iter.Seq[*frame]) error {
	w := bufio.NewWriterSize(x.f, 1<<20)
	if err := writeFrames(w, frs, &x.records); err != nil {
		return err
	}
	return w.Flush()
}

// grown reports whether the file holds enough dead records (replaced or
// removed tools) to be worth rewriting with the live ones only.
func (x *indexFile) grown(live int) bool {
	return x.records > compactMin && x.records > 2*live
}

// rewrite replaces the file with frs (every live tool): a new file is
// written, synced and renamed over the old one, so a crash leaves one or
// the other.
func (x *indexFile) rewrite(frs iter.Seq[*frame]) error {
	tmp := x.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	records := 0
	_, err = w.WriteString(indexMagic)
	if err == nil {
		err = writeFrames(w, frs, &records)
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = os.Rename(tmp, x.path)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	x.f.Close()
	x.f, x.records = f, records
	return nil
}

// writeFrames encodes each frame (length, checksum, gob body) to w,
// counting its records.
func writeFrames(w io.Writer, frs iter.Seq[*frame], records *int) error {
	var body bytes.Buffer
	for fr := range frs {
		body.Reset()
		if err := gob.NewEncoder(&body).Encode(fr); err != nil {
			return err
		}
		var head [binary.MaxVarintLen64 + 4]byte
		n := binary.PutUvarint(head[:], uint64(body.Len()))
		binary.LittleEndian.PutUint32(head[n:], crc32.Checksum(body.Bytes(), castagnoli))
		if _, err := w.Write(head[:n+4]); err != nil {
			return err
		}
		if _, err := w.Write(body.Bytes()); err != nil {
			return err
		}
		*records += len(fr.Tools) + len(fr.Removed)
	}
	return nil
}
