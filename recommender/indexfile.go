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
// frame, so re-indexing one tool writes about a kilobyte; when the file
// has grown to twice its last compacted size it is rewritten with only
// the live tools (a new file renamed over the old). A frame is its length,
// a CRC-32C of its body, then the gob-encoded body: a torn or damaged tail
// (a crash mid-append) is cut off on the next start and its tools are
// re-embedded when the catalog offers them again.
const (
	indexFileName = "ordo-tools.index"
	indexMagic    = "ORDOIDX\x00"
	// indexFormat changes when the frame layout or the tokenisation of
	// stored words (recommender/tokenize) changes: a file of another format
	// is dropped and rebuilt from the catalog.
	indexFormat = 2
	// frameTools bounds a frame, so a start decodes (and holds) one frame
	// of a large index at a time.
	frameTools = 4096
	// compactMin: smaller files are not worth compacting.
	compactMin = 1 << 20
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
	Hash     string
	Terms    [3][]uint32 // name, description, parameter words, as Vocab indexes
	SemScale float32     // one int8 step of its meaning vector (0: none)
}

// loaded is a tool read back from the index file.
type loaded struct {
	contract contracts.Contract
	hash     string
	words    [3][]string
	vec      []float32
	sem      []int8
	semScale float32
	stale    bool // made by another embedder: embed again
}

// indexFile appends frames to the index file and compacts it.
type indexFile struct {
	path      string
	f         *os.File
	size      int64 // bytes in the file
	compacted int64 // size after the last compaction (or load)
}

// openIndexFile reads every live tool of dir's index file (creating the
// file), names in file order, and leaves the file open for appends.
// damaged says why a tail was cut off (nil: none was).
func openIndexFile(dir, identity, semantic string) (x *indexFile, tools map[string]*loaded, order []string, damaged, err error) {
	path := filepath.Join(dir, indexFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	tools, all, good, damaged := readFrames(bufio.NewReaderSize(f, 1<<16), identity, semantic)
	if err = f.Truncate(good); err == nil && good == 0 {
		_, err = f.WriteString(indexMagic)
		good = int64(len(indexMagic))
	}
	if err != nil {
		f.Close()
		return nil, nil, nil, nil, err
	}
	for _, name := range all {
		if _, ok := tools[name]; ok {
			order = append(order, name)
		}
	}
	return &indexFile{path: path, f: f, size: good, compacted: good}, tools, order, damaged, nil
}

// readFrames decodes frames until the end or the first damaged one; good
// is the offset after the last good frame (0: empty, or not an index file
// of this format). order lists tool names by first appearance.
func readFrames(r *bufio.Reader, identity, semantic string) (tools map[string]*loaded, order []string, good int64, err error) {
	tools = map[string]*loaded{}
	magic := make([]byte, len(indexMagic))
	if _, err := io.ReadFull(r, magic); err != nil {
		if errors.Is(err, io.EOF) {
			return tools, nil, 0, nil
		}
		return map[string]*loaded{}, nil, 0, err
	}
	if string(magic) != indexMagic {
		return tools, nil, 0, errors.New("not an index file")
	}
	good = int64(len(indexMagic))
	for {
		body, n, err := readFrame(r)
		if errors.Is(err, io.EOF) {
			return tools, order, good, nil
		}
		if err != nil {
			return tools, order, good, err
		}
		var fr frame
		if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&fr); err != nil {
			return tools, order, good, fmt.Errorf("decode frame: %w", err)
		}
		if fr.Format != indexFormat {
			// Another version's file: start over (its tools are
			// re-embedded as the catalog offers them).
			return map[string]*loaded{}, nil, 0, fmt.Errorf("format %d, want %d", fr.Format, indexFormat)
		}
		if err := fr.apply(tools, &order, identity, semantic); err != nil {
			return tools, order, good, err
		}
		good += n
	}
}

// readFrame reads one frame's body and says how many bytes it took.
func readFrame(r *bufio.Reader) ([]byte, int64, error) {
	size, err := binary.ReadUvarint(r)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, 0, io.EOF
		}
		return nil, 0, err
	}
	if size > 1<<31 {
		return nil, 0, fmt.Errorf("frame of %d bytes", size)
	}
	var sum [4]byte
	if _, err := io.ReadFull(r, sum[:]); err != nil {
		return nil, 0, fmt.Errorf("torn frame: %w", err)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, 0, fmt.Errorf("torn frame: %w", err)
	}
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(sum[:]) {
		return nil, 0, errors.New("frame checksum mismatch")
	}
	return body, int64(binary.PutUvarint(make([]byte, binary.MaxVarintLen64), size)) + 4 + int64(size), nil
}

// apply records the frame's tools and removals over what earlier frames
// said.
func (fr *frame) apply(tools map[string]*loaded, order *[]string, identity, semantic string) error {
	n := len(fr.Tools)
	if fr.Dim < 0 || fr.SemDim < 0 || len(fr.Vectors) != n*fr.Dim*4 || len(fr.Sem) != n*fr.SemDim {
		return errors.New("frame vectors do not match its tools")
	}
	vecs := make([]float32, n*fr.Dim)
	for i := range vecs {
		vecs[i] = math.Float32frombits(binary.LittleEndian.Uint32(fr.Vectors[i*4:]))
	}
	sems := make([]int8, len(fr.Sem))
	for i, b := range fr.Sem {
		sems[i] = int8(b)
	}
	for i, st := range fr.Tools {
		l := &loaded{contract: st.Contract, hash: st.Hash, vec: vecs[i*fr.Dim : (i+1)*fr.Dim : (i+1)*fr.Dim],
			stale: fr.Identity != identity || fr.Semantic != semantic}
		if fr.SemDim > 0 {
			l.sem, l.semScale = sems[i*fr.SemDim:(i+1)*fr.SemDim:(i+1)*fr.SemDim], st.SemScale
		}
		for f, ids := range st.Terms {
			l.words[f] = make([]string, len(ids))
			for j, id := range ids {
				if int(id) >= len(fr.Vocab) {
					return errors.New("frame term out of range")
				}
				l.words[f][j] = fr.Vocab[id]
			}
		}
		if st.Contract.Tool == "" {
			return errors.New("frame tool without a name")
		}
		if _, ok := tools[st.Contract.Tool]; !ok {
			*order = append(*order, st.Contract.Tool)
		}
		tools[st.Contract.Tool] = l
	}
	for _, name := range fr.Removed {
		delete(tools, name)
	}
	return nil
}

// appendFrames writes frames at the end of the file.
func (x *indexFile) appendFrames(frs []frame) error {
	var buf bytes.Buffer
	for i := range frs {
		if err := encodeFrame(&buf, &frs[i]); err != nil {
			return err
		}
	}
	n, err := x.f.Write(buf.Bytes())
	x.size += int64(n)
	return err
}

// grown reports whether the file is worth rewriting with only live tools.
func (x *indexFile) grown() bool {
	return x.size > compactMin && x.size > 2*x.compacted
}

// rewrite replaces the file with frames (every live tool): a new file is
// written, synced and renamed over the old one, so a crash leaves one or
// the other.
func (x *indexFile) rewrite(frs []frame) error {
	tmp := x.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	size := int64(len(indexMagic))
	_, err = w.WriteString(indexMagic)
	var buf bytes.Buffer
	for i := 0; err == nil && i < len(frs); i++ {
		buf.Reset()
		if err = encodeFrame(&buf, &frs[i]); err == nil {
			size += int64(buf.Len())
			_, err = w.Write(buf.Bytes())
		}
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
	x.f, x.size, x.compacted = f, size, size
	return nil
}

// encodeFrame appends one frame (length, checksum, gob body) to buf.
func encodeFrame(buf *bytes.Buffer, fr *frame) error {
	var body bytes.Buffer
	if err := gob.NewEncoder(&body).Encode(fr); err != nil {
		return err
	}
	var head [binary.MaxVarintLen64 + 4]byte
	n := binary.PutUvarint(head[:], uint64(body.Len()))
	binary.LittleEndian.PutUint32(head[n:], crc32.Checksum(body.Bytes(), castagnoli))
	buf.Write(head[:n+4])
	buf.Write(body.Bytes())
	return nil
}

func (x *indexFile) close() error { return x.f.Close() }
