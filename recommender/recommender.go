package recommender

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	chromem "github.com/philippgille/chromem-go"
	"golang.org/x/sync/errgroup"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/recommender/embed"
)

const collectionName = "tools"

// Options configure a Recommender.
type Options struct {
	// Dir persists the index (one file, ordo-tools.index); "" keeps it in
	// memory.
	Dir string
	// Embedder makes the vectors; nil means the offline embed.Hashed default.
	// Never nil inside chromem-go, whose nil means "call OpenAI".
	Embedder embed.Embedder
	// Semantic, when set, embeds meaning (embed/semantic's static vectors):
	// its similarity to every allowed tool, not only the lexical
	// candidates, is fused into the whole request's list with
	// Ranking.SemanticWeight, so a tool that shares no word with the
	// request can still rank. Its vectors are kept quantised (int8) and
	// persisted with the index; it must not call a server (it also runs
	// once per search).
	Semantic embed.Embedder
	// Ranking tunes the fusion; the zero value means DefaultRanking().
	Ranking Ranking
	// Logger receives index maintenance messages; nil means slog.Default().
	Logger *slog.Logger
}

// Stats describe the index, so callers and tests can see what work was done.
type Stats struct {
	Tools            int    // tools indexed now
	Embedded         int64  // documents embedded since New (reused vectors are not counted)
	SemanticEmbedded int64  // documents given meaning vectors since New (Options.Semantic)
	Rebuilt          bool   // New found an index made by another embedder and re-embedded it
	Identity         string // the embedder identity stored with the index
	Semantic         string // Options.Semantic's identity ("" without one)
}

// Recommender ranks catalog tools for a request. It is safe for concurrent
// use; writes are serialised, searches run in parallel with each other.
type Recommender struct {
	opts    Options
	emb     embed.Embedder
	rank    Ranking
	log     *slog.Logger
	col     *chromem.Collection // the vectors of record, in memory (persisted by file)
	file    *indexFile          // nil in memory
	writeMu sync.Mutex          // one writer at a time (embedding happens outside mu)
	mu      sync.RWMutex
	tools   map[string]*entry
	bySlot  []*entry // by lexical slot, for filters (nil: free slot)
	lex     *bm25
	vecs    [][]float32 // by slot: the collection's vectors, for the query path
	sem     flat        // Options.Semantic's vectors by slot, int8 (empty without it)
	dim     int
	// embedded and semEmbedded count documents embedded since New.
	embedded, semEmbedded atomic.Int64
	rebuilt               bool
}

// entry is the in-memory view of one indexed tool.
type entry struct {
	contract contracts.Contract
	sum      string // contracts.Contract.Hash: equal sums, nothing to do
	textHash string // of the indexed text (fields.hash): equal hashes, same vectors
	service  string
}

// New opens (or creates) a tool index. With a persisted Dir, previously
// indexed tools are loaded from the index file without embedding or
// tokenising them again; tools stored by another embedder (or another
// Options.Semantic) are embedded again.
func New(opts Options) (*Recommender, error) {
	r := &Recommender{opts: opts, emb: opts.Embedder, rank: opts.Ranking, log: opts.Logger,
		tools: map[string]*entry{}}
	if r.emb == nil {
		r.emb = embed.NewHashed(embed.HashedOptions{})
	}
	if r.rank == (Ranking{}) {
		r.rank = DefaultRanking()
	}
	if err := r.rank.validate(); err != nil {
		return nil, err
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	r.lex = newBM25(r.rank)
	col, err := chromem.NewDB().CreateCollection(collectionName, nil, noEmbedding)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInternal, "open tool collection: %w", err)
	}
	r.col = col
	if opts.Dir == "" {
		return r, nil
	}
	if err := r.load(context.Background()); err != nil {
		return nil, err
	}
	return r, nil
}

// noEmbedding is the collection's embedding function: the recommender always
// passes vectors, and a nil function would silently call OpenAI.
func noEmbedding(context.Context, string) ([]float32, error) {
	return nil, errors.New("recommender: chromem-go must not embed by itself")
}

// semanticIdentity names Options.Semantic ("" without one).
func (r *Recommender) semanticIdentity() string {
	if r.opts.Semantic == nil {
		return ""
	}
	return r.opts.Semantic.Identity()
}

// load replays the index file: every stored tool is indexed from its
// stored vectors and words; tools stored by other embedders are embedded
// again and the file rewritten without their old records.
func (r *Recommender) load(ctx context.Context) error {
	dropChromemLayout(r.opts.Dir, r.log)
	stale := map[string]Offer{}
	replay := func(fr *frame) error { return r.replay(ctx, fr, stale) }
	file, damaged, err := openIndexFile(r.opts.Dir, replay)
	if err != nil {
		return contracts.Errorf(contracts.CodeInvalidConfig, "open tool index: %w", err).With("dir", r.opts.Dir)
	}
	if damaged != nil {
		r.log.Warn("tool index file damaged; its tail was dropped and is re-indexed as tools are offered", "dir", r.opts.Dir, "err", damaged)
	}
	r.file = file
	if len(stale) == 0 {
		return nil
	}
	r.log.Info("embedder changed; re-embedding stored tools", "embedder", r.emb.Identity(), "semantic", r.semanticIdentity(), "tools", len(stale))
	r.rebuilt = true
	names := slices.Sorted(maps.Keys(stale))
	offers := make([]Offer, len(names))
	for i, n := range names {
		offers[i] = stale[n]
	}
	if err := r.UpsertOffers(ctx, offers...); err != nil {
		return err
	}
	return r.compact()
}

// replay applies one frame of the index file: its tools replace earlier
// records of the same names, its removals drop them. Tools stored by
// another embedder (or Options.Semantic) are collected in stale instead.
func (r *Recommender) replay(ctx context.Context, fr *frame, stale map[string]Offer) error {
	old := fr.Identity != r.emb.Identity() || fr.Semantic != r.semanticIdentity()
	vecs, sems := fr.vectors()
	ids := make([]int32, len(fr.Vocab))
	for i, w := range fr.Vocab {
		ids[i] = r.lex.internWord(w)
	}
	for i, st := range fr.Tools {
		name := st.Contract.Tool
		if old {
			stale[name] = Offer{Contract: st.Contract, Hash: st.Sum}
			if err := r.drop(ctx, name); err != nil {
				return err
			}
			continue
		}
		delete(stale, name)
		v := vecs[i*fr.Dim : (i+1)*fr.Dim : (i+1)*fr.Dim]
		if err := r.checkDim(v); err != nil {
			return err.With("tool", name)
		}
		var words termFields
		for f, ls := range st.Terms {
			words[f] = make([]int32, len(ls))
			for j, l := range ls {
				words[f][j] = ids[l]
			}
		}
		if err := r.putVector(ctx, name, v); err != nil {
			return err
		}
		r.index(st.Contract, st.Sum, st.Hash, words, v)
		if fr.SemDim > 0 {
			r.sem.setQuantised(r.lex.slots[name], sems[i*fr.SemDim:(i+1)*fr.SemDim], st.SemScale)
		}
	}
	for _, name := range fr.Removed {
		delete(stale, name)
		if err := r.drop(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

// dropChromemLayout removes the index of earlier versions (a manifest and
// chromem-go's directory of one file per tool): its tools are embedded
// again as the catalog offers them.
func dropChromemLayout(dir string, log *slog.Logger) {
	const manifest = "ordo-tool-index.json"
	if _, err := os.Stat(filepath.Join(dir, manifest)); err != nil {
		return
	}
	// chromem-go names a collection's directory by the first 4 bytes of
	// the SHA-256 of its name.
	sum := sha256.Sum256([]byte(collectionName))
	old := filepath.Join(dir, hex.EncodeToString(sum[:4]))
	log.Info("dropping the per-document tool index of an earlier version", "dir", old)
	if err := errors.Join(os.RemoveAll(old), os.Remove(filepath.Join(dir, manifest))); err != nil {
		log.Warn("could not remove the old tool index", "err", err)
	}
}

// putVector stores a tool's vector in the collection, replacing its old
// one, and keeps a corpus-aware embedder's statistics in step. Caller holds
// mu or is New.
func (r *Recommender) putVector(ctx context.Context, name string, v []float32) error {
	if err := r.dropVector(ctx, name); err != nil {
		return err
	}
	if err := r.col.AddDocument(ctx, chromem.Document{ID: name, Embedding: v}); err != nil {
		return contracts.Errorf(contracts.CodeInternal, "store tool %s: %w", name, err).With("tool", name)
	}
	if ca, ok := r.emb.(embed.CorpusAware); ok {
		ca.AddVector(v)
	}
	return nil
}

// dropVector removes a tool's vector from the collection (if it has one)
// and from a corpus-aware embedder's statistics.
func (r *Recommender) dropVector(ctx context.Context, name string) error {
	slot, known := r.lex.slots[name]
	if !known {
		return nil
	}
	if ca, ok := r.emb.(embed.CorpusAware); ok {
		ca.RemoveVector(r.vecs[slot])
	}
	if err := r.col.Delete(ctx, nil, nil, name); err != nil {
		return contracts.Errorf(contracts.CodeInternal, "remove tool %s: %w", name, err).With("tool", name)
	}
	return nil
}

// drop forgets a tool (nothing for an unknown name). Caller holds mu or
// is New.
func (r *Recommender) drop(ctx context.Context, name string) error {
	slot, known := r.lex.slots[name]
	if !known {
		return nil
	}
	if err := r.dropVector(ctx, name); err != nil {
		return err
	}
	r.bySlot[slot], r.vecs[slot] = nil, nil
	r.sem.clear(slot)
	r.lex.remove(name)
	delete(r.tools, name)
	return nil
}

// index records a tool in the in-memory structures after putVector (caller
// holds mu or is New).
func (r *Recommender) index(c contracts.Contract, sum, textHash string, words termFields, v []float32) {
	e := &entry{contract: c, sum: sum, textHash: textHash, service: serviceOf(c)}
	r.tools[c.Tool] = e
	r.lex.add(c.Tool, words)
	slot := r.lex.slots[c.Tool]
	for len(r.bySlot) <= slot {
		r.bySlot, r.vecs = append(r.bySlot, nil), append(r.vecs, nil)
	}
	r.bySlot[slot], r.vecs[slot] = e, v
}

// embedBatch is how many offered tools Upsert classifies, embeds (one
// embedding request) and writes at a time.
const embedBatch = 4096

// pending is one offered tool that changes the index.
type pending struct {
	c     contracts.Contract
	sum   string // contracts.Contract.Hash of c
	f     fields
	hash  string      // fields.hash of f
	words [3][]string // the lexical index's words, when the text changed
	text  bool        // the indexed text changed: embed it
}

// Offer is a contract offered to the index with its content hash
// (contracts.Contract.Hash), as the host's catalog carries it on its
// events (CatalogEvent.Hash) and compiled tools hold it (Tool.Hash), so
// the index decides "unchanged" by comparing hashes it never computes.
type Offer struct {
	Contract contracts.Contract
	Hash     string // "" means: hash the contract here
}

// Upsert adds or replaces tools; it is UpsertOffers for contracts without
// a carried hash (tests, the evaluation), hashing each with
// contracts.Contract.Hash.
func (r *Recommender) Upsert(ctx context.Context, cs ...contracts.Contract) error {
	offers := make([]Offer, len(cs))
	for i, c := range cs {
		offers[i] = Offer{Contract: c}
	}
	return r.UpsertOffers(ctx, offers...)
}

// UpsertOffers adds or replaces tools. An offer whose hash equals the
// indexed tool's changes nothing (a start re-offers every tool). Only tools
// whose indexed text changed are re-embedded, in batches of up to 4,096
// tools (one embedding request each); a contract change that leaves the
// text alone (risk, scopes) only updates the stored contract. Invalid
// contracts change nothing; when an embedding request fails, the batches
// before it stay indexed.
func (r *Recommender) UpsertOffers(ctx context.Context, offers ...Offer) error {
	latest := map[string]int{} // the last offer of each name
	order := []string{}
	for i, o := range offers {
		c := o.Contract
		if c.Tool == "" {
			return contracts.Errorf(contracts.CodeInvalidContract, "contract %d has no tool name", i).With("field", "tool").With("index", i)
		}
		if _, ok := latest[c.Tool]; !ok {
			order = append(order, c.Tool)
		}
		latest[c.Tool] = i
	}
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	// Batch by batch (a large catalog's words and vectors are not all
	// held at once): decide what changes, then tokenise and embed without
	// blocking searches (writeMu keeps the index as it is meanwhile).
	for len(order) > 0 {
		batch := order[:min(embedBatch, len(order))]
		order = order[len(batch):]
		r.mu.RLock()
		var todo []*pending
		for _, name := range batch {
			o := offers[latest[name]]
			if o.Hash == "" {
				o.Hash = o.Contract.Hash()
			}
			old, known := r.tools[name]
			if known && old.sum == o.Hash {
				continue // a start re-offers every tool: nothing to do
			}
			f := toolFields(o.Contract)
			p := &pending{c: o.Contract, sum: o.Hash, f: f, hash: f.hash()}
			p.text = !known || old.textHash != p.hash
			todo = append(todo, p)
		}
		r.mu.RUnlock()
		if len(todo) > 0 {
			if err := r.upsert(ctx, todo); err != nil {
				return err
			}
		}
	}
	return nil
}

// upsert embeds, indexes and persists one batch of changed tools. Caller
// holds writeMu.
func (r *Recommender) upsert(ctx context.Context, todo []*pending) error {
	var texts []string
	var words [][]string
	for _, p := range todo {
		if p.text {
			var all []string
			p.words, all = fieldWords(p.f)
			texts, words = append(texts, p.f.text()), append(words, all)
		}
	}
	// The meaning vectors are made alongside (the embedders are
	// independent): a large catalog is indexed in about the time of the
	// slower one.
	var sems map[string][]float32
	var g errgroup.Group
	g.Go(func() (err error) {
		sems, err = r.semanticVectors(ctx, todo)
		return err
	})
	vecs, err := r.embedDocuments(ctx, texts, words)
	if werr := g.Wait(); err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	i := 0
	for _, p := range todo {
		if p.text {
			if err := r.checkDim(vecs[i]); err != nil {
				return err.With("tool", p.c.Tool)
			}
			i++
		}
	}

	r.mu.Lock()
	i = 0
	for _, p := range todo {
		if !p.text {
			// Same text, same vectors and words: only the contract.
			e := *r.tools[p.c.Tool]
			e.contract, e.sum, e.service = p.c, p.sum, serviceOf(p.c)
			r.tools[p.c.Tool], r.bySlot[r.lex.slots[p.c.Tool]] = &e, &e
			continue
		}
		v := vecs[i]
		i++
		if err := r.putVector(ctx, p.c.Tool, v); err != nil {
			r.mu.Unlock()
			return err
		}
		r.index(p.c, p.sum, p.hash, r.lex.intern(p.words), v)
		if sv, ok := sems[p.c.Tool]; ok {
			r.sem.set(r.lex.slots[p.c.Tool], sv)
		}
	}
	r.mu.Unlock()
	names := make([]string, len(todo))
	for i, p := range todo {
		names[i] = p.c.Tool
	}
	return r.persist(names, nil)
}

// persist appends the named tools (as indexed now) and the removals to the
// index file, and compacts the file once most of its records are dead.
// Searches may run meanwhile; the caller holds writeMu, so nothing else
// changes the index.
func (r *Recommender) persist(names, removed []string) error {
	if r.file == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if err := r.file.appendFrames(r.frames(names, removed)); err != nil {
		return contracts.Errorf(contracts.CodeInternal, "write tool index: %w", err).With("dir", r.opts.Dir)
	}
	if r.file.grown(len(r.tools)) {
		return r.rewrite()
	}
	return nil
}

// Close closes the index file; the recommender must not be used after.
// An in-memory recommender has nothing to close.
func (r *Recommender) Close() error {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	if r.file == nil {
		return nil
	}
	err := r.file.f.Close()
	r.file = nil
	return err
}

// compact rewrites the index file with the live tools only (caller holds
// writeMu or is New).
func (r *Recommender) compact() error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.rewrite()
}

// rewrite is compact with mu held.
func (r *Recommender) rewrite() error {
	names := make([]string, 0, len(r.tools))
	for _, n := range r.lex.names {
		if n != "" {
			names = append(names, n)
		}
	}
	if err := r.file.rewrite(r.frames(names, nil)); err != nil {
		return contracts.Errorf(contracts.CodeInternal, "rewrite tool index: %w", err).With("dir", r.opts.Dir)
	}
	return nil
}

// frames encodes the named tools as index file frames of at most
// frameTools tools each, one frame at a time, then the removals. Caller
// holds mu.
func (r *Recommender) frames(names, removed []string) iter.Seq[*frame] {
	return func(yield func(*frame) bool) {
		for len(names) > 0 {
			batch := names[:min(frameTools, len(names))]
			names = names[len(batch):]
			if !yield(r.frame(batch)) {
				return
			}
		}
		if len(removed) > 0 {
			yield(&frame{Format: indexFormat, Identity: r.emb.Identity(), Semantic: r.semanticIdentity(), Removed: removed})
		}
	}
}

// frame encodes tools as one frame. Caller holds mu.
func (r *Recommender) frame(batch []string) *frame {
	fr := &frame{Format: indexFormat, Identity: r.emb.Identity(), Dim: r.dim, Semantic: r.semanticIdentity(), SemDim: r.sem.dim,
		Tools: make([]storedTool, len(batch)), Vectors: make([]byte, 0, len(batch)*r.dim*4), Sem: make([]byte, 0, len(batch)*r.sem.dim)}
	local := map[int32]uint32{}
	for i, name := range batch {
		e, slot := r.tools[name], r.lex.slots[name]
		st := storedTool{Contract: e.contract, Sum: e.sum, Hash: e.textHash}
		for f, ids := range r.lex.fields[slot] {
			st.Terms[f] = make([]uint32, len(ids))
			for j, id := range ids {
				l, ok := local[id]
				if !ok {
					l = uint32(len(fr.Vocab))
					local[id] = l
					fr.Vocab = append(fr.Vocab, r.lex.vocab[id])
				}
				st.Terms[f][j] = l
			}
		}
		for _, x := range r.vecs[slot] {
			fr.Vectors = binary.LittleEndian.AppendUint32(fr.Vectors, math.Float32bits(x))
		}
		if fr.SemDim > 0 {
			row, scale := r.sem.row(slot)
			for _, x := range row {
				fr.Sem = append(fr.Sem, byte(x))
			}
			st.SemScale = scale
		}
		fr.Tools[i] = st
	}
	return fr
}

// embedDocuments embeds changed tools' texts (their words for a
// WordEmbedder).
func (r *Recommender) embedDocuments(ctx context.Context, texts []string, words [][]string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	var out [][]float32
	var err error
	if we, ok := r.emb.(embed.WordEmbedder); ok {
		out = we.EmbedWords(words)
	} else {
		out, err = r.emb.EmbedDocuments(ctx, texts)
	}
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeExternal, "embed %d tools: %w", len(texts), err).With("embedder", r.emb.Identity())
	}
	if len(out) != len(texts) {
		return nil, contracts.Errorf(contracts.CodeExternal, "embedder returned %d vectors for %d texts", len(out), len(texts)).With("embedder", r.emb.Identity())
	}
	r.embedded.Add(int64(len(texts)))
	return out, nil
}

// checkDim fixes the index dimension on the first vector and refuses
// vectors of another size, which could not be compared.
func (r *Recommender) checkDim(v []float32) *contracts.Error {
	if len(v) == 0 {
		return contracts.Errorf(contracts.CodeExternal, "embedder returned an empty vector")
	}
	if r.dim == 0 {
		r.dim = len(v)
	}
	if len(v) != r.dim {
		return contracts.Errorf(contracts.CodeExternal, "embedder returned %d dimensions, index has %d", len(v), r.dim)
	}
	return nil
}

// Remove drops tools from the index; unknown names are ignored (removal is
// idempotent, as catalog events may repeat).
func (r *Recommender) Remove(ctx context.Context, tools ...string) error {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.mu.Lock()
	var removed []string
	for _, name := range tools {
		if _, ok := r.tools[name]; !ok {
			continue
		}
		if err := r.drop(ctx, name); err != nil {
			r.mu.Unlock()
			return err
		}
		removed = append(removed, name)
	}
	r.mu.Unlock()
	if len(removed) == 0 {
		return nil
	}
	return r.persist(nil, removed)
}

// Stats reports the index size and the embedding work done so far.
func (r *Recommender) Stats() Stats {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return Stats{Tools: len(r.tools), Embedded: r.embedded.Load(), SemanticEmbedded: r.semEmbedded.Load(),
		Rebuilt: r.rebuilt, Identity: r.emb.Identity(), Semantic: r.semanticIdentity()}
}

// ChangeKind says what happened to a catalog tool.
type ChangeKind int

// Catalog change kinds, mirroring the host's catalog events.
const (
	Added ChangeKind = iota + 1
	Removed
	Changed
)

// Change is one catalog event, in the recommender's own terms so it does not
// depend on the host package: wiring is a loop converting host events.
type Change struct {
	Kind     ChangeKind
	Tool     string // the tool's name; defaults to Contract.Tool
	Contract contracts.Contract
	Hash     string // the contract's hash (CatalogEvent.Hash); "" means hash it here
}

// Apply follows one catalog change.
func (r *Recommender) Apply(ctx context.Context, ev Change) error {
	switch ev.Kind {
	case Added, Changed:
		return r.UpsertOffers(ctx, Offer{Contract: ev.Contract, Hash: ev.Hash})
	case Removed:
		name := ev.Tool
		if name == "" {
			name = ev.Contract.Tool
		}
		if name == "" {
			return contracts.Errorf(contracts.CodeInvalidInput, "removal names no tool").With("field", "tool")
		}
		return r.Remove(ctx, name)
	default:
		return contracts.Errorf(contracts.CodeInvalidInput, "unknown change kind %d", ev.Kind).With("field", "kind")
	}
}

// String names the kind for logs.
func (k ChangeKind) String() string {
	switch k {
	case Added:
		return "added"
	case Removed:
		return "removed"
	case Changed:
		return "changed"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// semanticVectors embeds the changed texts with Options.Semantic in one
// batch (nil without it).
func (r *Recommender) semanticVectors(ctx context.Context, todo []*pending) (map[string][]float32, error) {
	var names, texts []string
	for _, p := range todo {
		if p.text && r.opts.Semantic != nil {
			names, texts = append(names, p.c.Tool), append(texts, p.f.semanticText())
		}
	}
	if len(texts) == 0 {
		return nil, nil
	}
	out, err := r.opts.Semantic.EmbedDocuments(ctx, texts)
	if err == nil && len(out) != len(texts) {
		err = fmt.Errorf("%d vectors for %d texts", len(out), len(texts))
	}
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeExternal, "semantic embedding of %d tools: %w", len(texts), err).With("embedder", r.opts.Semantic.Identity())
	}
	r.semEmbedded.Add(int64(len(texts)))
	vecs := make(map[string][]float32, len(names))
	for i, n := range names {
		vecs[n] = out[i]
	}
	return vecs, nil
}
