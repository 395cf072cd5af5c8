package recommender

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"

	chromem "github.com/philippgille/chromem-go"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/recommender/embed"
)

const (
	collectionName = "tools"
	manifestName   = "ordo-tool-index.json"
	// indexFormat changes when the stored document layout changes.
	indexFormat = 1
)

// Metadata keys stored with each chromem document.
const (
	metaHash     = "hash"
	metaContract = "contract"
)

// Options configure a Recommender.
type Options struct {
	// Dir persists the index (one chromem-go directory); "" keeps it in memory.
	Dir string
	// Embedder makes the vectors; nil means the offline embed.Hashed default.
	// Never nil inside chromem-go, whose nil means "call OpenAI".
	Embedder embed.Embedder
	// Semantic, when set, embeds meaning (embed/semantic's static vectors):
	// its similarity to every allowed tool, not only the lexical
	// candidates, is fused into the whole request's list with
	// Ranking.SemanticWeight, so a tool that shares no word with the
	// request can still rank. Its vectors are cheap and kept in memory
	// only (re-embedded on start), so it must not call a server.
	Semantic embed.Embedder
	// Ranking tunes the fusion; the zero value means DefaultRanking().
	Ranking Ranking
	// Logger receives index maintenance messages; nil means slog.Default().
	Logger *slog.Logger
}

// Stats describe the index, so callers and tests can see what work was done.
type Stats struct {
	Tools    int    // tools indexed now
	Embedded int64  // documents embedded since New (reused vectors are not counted)
	Rebuilt  bool   // New found an index made by another embedder and re-embedded it
	Identity string // the embedder identity stored with the index
	Semantic string // Options.Semantic's identity ("" without one)
}

// Recommender ranks catalog tools for a request. It is safe for concurrent
// use; writes are serialised, searches run in parallel with each other.
type Recommender struct {
	opts     Options
	emb      embed.Embedder
	rank     Ranking
	log      *slog.Logger
	db       *chromem.DB
	col      *chromem.Collection
	writeMu  sync.Mutex // one writer at a time (embedding happens outside mu)
	mu       sync.RWMutex
	tools    map[string]*entry
	bySlot   []*entry // by lexical slot, for filters (nil: free slot)
	lex      *bm25
	vec      flat // the query path's int8 copy of the vectors
	sem      flat // Options.Semantic's vectors by slot (empty without it)
	dim      int
	manifest embed.Manifest // as last written, so a start that changes nothing writes nothing
	embedded atomic.Int64
	rebuilt  bool
}

// entry is the in-memory view of one indexed tool.
type entry struct {
	contract contracts.Contract
	fields   fields
	hash     string
	service  string
}

// New opens (or creates) a tool index. With a persisted Dir, previously
// indexed tools are loaded without re-embedding; if the stored embedder
// identity differs from opts.Embedder's, every stored tool is re-embedded.
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
	if opts.Dir == "" {
		r.db = chromem.NewDB()
	} else {
		db, err := chromem.NewPersistentDB(opts.Dir, false)
		if err != nil {
			return nil, contracts.Errorf(contracts.CodeInvalidConfig, "open tool index: %w", err).With("dir", opts.Dir)
		}
		r.db = db
	}
	old, err := r.readManifest()
	if err != nil {
		return nil, err
	}
	r.manifest = old
	r.col, err = r.db.GetOrCreateCollection(collectionName, nil, noEmbedding)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInternal, "open tool collection: %w", err)
	}
	if err := r.load(context.Background(), old); err != nil {
		return nil, err
	}
	return r, nil
}

// noEmbedding is the collection's embedding function: the recommender always
// passes vectors, and a nil function would silently call OpenAI.
func noEmbedding(context.Context, string) ([]float32, error) {
	return nil, errors.New("recommender: chromem-go must not embed by itself")
}

func (r *Recommender) manifestPath() string { return filepath.Join(r.opts.Dir, manifestName) }

func (r *Recommender) readManifest() (embed.Manifest, error) {
	if r.opts.Dir == "" {
		return embed.Manifest{}, nil
	}
	m, err := embed.ReadManifest(r.manifestPath())
	if err != nil {
		return m, contracts.Errorf(contracts.CodeInvalidConfig, "read tool index manifest: %w", err).With("path", r.manifestPath())
	}
	return m, nil
}

// writeManifest records the embedder and dimension once they change: an
// Upsert that only re-offers known tools (every start) writes nothing.
func (r *Recommender) writeManifest() error {
	m := embed.Manifest{Format: indexFormat, Identity: r.emb.Identity(), Dim: r.dim}
	if r.opts.Dir == "" || m == r.manifest {
		return nil
	}
	if err := embed.WriteManifest(r.manifestPath(), m); err != nil {
		return contracts.Errorf(contracts.CodeInternal, "write tool index manifest: %w", err)
	}
	r.manifest = m
	return nil
}

// load reads the persisted documents back. chromem-go has no listing call,
// so one query for Count() results with any vector of the stored dimension
// enumerates the collection.
func (r *Recommender) load(ctx context.Context, m embed.Manifest) error {
	n := r.col.Count()
	if n == 0 {
		return nil
	}
	if m.Dim <= 0 || m.Format != indexFormat {
		r.log.Warn("tool index has no usable manifest; starting empty", "dir", r.opts.Dir)
		return r.resetCollection()
	}
	probe := make([]float32, m.Dim)
	probe[0] = 1
	docs, err := r.col.QueryEmbedding(ctx, probe, n, nil, nil)
	if err != nil {
		return contracts.Errorf(contracts.CodeInternal, "read tool index: %w", err)
	}
	var stored []contracts.Contract
	for _, d := range docs {
		var c contracts.Contract
		if err := json.Unmarshal([]byte(d.Metadata[metaContract]), &c); err != nil {
			r.log.Warn("dropping unreadable tool index entry", "id", d.ID, "err", err)
			continue
		}
		stored = append(stored, c)
		if m.Identity == r.emb.Identity() {
			r.index(c, toolFields(c), d.Embedding, nil)
		}
	}
	if m.Identity == r.emb.Identity() {
		r.dim = m.Dim
		return r.embedSemantic(ctx, stored)
	}
	r.log.Info("embedder changed; rebuilding tool index", "old", m.Identity, "new", r.emb.Identity(), "tools", len(stored))
	if err := r.resetCollection(); err != nil {
		return err
	}
	r.rebuilt = true
	return r.Upsert(ctx, stored...)
}

func (r *Recommender) resetCollection() error {
	if err := r.db.DeleteCollection(collectionName); err != nil {
		return contracts.Errorf(contracts.CodeInternal, "reset tool index: %w", err)
	}
	col, err := r.db.CreateCollection(collectionName, nil, noEmbedding)
	if err != nil {
		return contracts.Errorf(contracts.CodeInternal, "reset tool index: %w", err)
	}
	r.col = col
	return nil
}

// index records a tool and its vector in the in-memory structures (caller
// holds mu or is New).
func (r *Recommender) index(c contracts.Contract, f fields, v []float32, semVecs map[string][]float32) {
	if old, ok := r.tools[c.Tool]; ok {
		if ca, ok := r.emb.(embed.CorpusAware); ok {
			ca.RemoveDocument(old.fields.text())
		}
	}
	e := &entry{contract: c, fields: f, hash: f.hash(), service: serviceOf(c)}
	r.tools[c.Tool] = e
	r.lex.add(c.Tool, f)
	slot := r.lex.slots[c.Tool]
	for len(r.bySlot) <= slot {
		r.bySlot = append(r.bySlot, nil)
	}
	r.bySlot[slot] = e
	r.vec.set(slot, v)
	if sv, ok := semVecs[c.Tool]; ok {
		r.sem.set(slot, sv)
	}
	if ca, ok := r.emb.(embed.CorpusAware); ok {
		ca.AddDocument(f.text())
	}
}

// Upsert adds or replaces tools. Only tools whose indexed text changed are
// re-embedded; a contract change that leaves the text alone (risk, scopes)
// only updates the stored metadata. Invalid contracts change nothing.
func (r *Recommender) Upsert(ctx context.Context, cs ...contracts.Contract) error {
	latest := map[string]contracts.Contract{}
	order := []string{}
	for i, c := range cs {
		if c.Tool == "" {
			return contracts.Errorf(contracts.CodeInvalidContract, "contract %d has no tool name", i).With("field", "tool").With("index", i)
		}
		if _, ok := latest[c.Tool]; !ok {
			order = append(order, c.Tool)
		}
		latest[c.Tool] = c
	}
	if len(order) == 0 {
		return nil
	}
	r.writeMu.Lock()
	defer r.writeMu.Unlock()

	// Decide what needs vectors, then embed without blocking searches.
	r.mu.RLock()
	var texts []string
	var need []string
	fs := make(map[string]fields, len(order))
	for _, name := range order {
		f := toolFields(latest[name])
		fs[name] = f
		if old, ok := r.tools[name]; !ok || old.hash != f.hash() {
			need = append(need, name)
			texts = append(texts, f.text())
		}
	}
	r.mu.RUnlock()
	vecs := map[string][]float32{}
	if len(texts) > 0 {
		out, err := r.emb.EmbedDocuments(ctx, texts)
		if err != nil {
			return contracts.Errorf(contracts.CodeExternal, "embed %d tools: %w", len(texts), err).With("embedder", r.emb.Identity())
		}
		if len(out) != len(texts) {
			return contracts.Errorf(contracts.CodeExternal, "embedder returned %d vectors for %d texts", len(out), len(texts)).With("embedder", r.emb.Identity())
		}
		for i, name := range need {
			if err := r.checkDim(out[i]); err != nil {
				return err.With("tool", name)
			}
			vecs[name] = out[i]
		}
		r.embedded.Add(int64(len(texts)))
	}
	semVecs, err := r.semanticVectors(ctx, need, fs)
	if err != nil {
		return err
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	for _, name := range order {
		c := latest[name]
		v, ok := vecs[name]
		if old, known := r.tools[name]; !ok && known && reflect.DeepEqual(old.contract, c) {
			continue // identical contract: nothing to write
		}
		if !ok {
			doc, err := r.col.GetByID(ctx, name)
			if err != nil {
				return contracts.Errorf(contracts.CodeInternal, "reuse vector of %s: %w", name, err).With("tool", name)
			}
			v = doc.Embedding
		}
		if err := r.store(ctx, c, fs[name], v); err != nil {
			return err
		}
		r.index(c, fs[name], v, semVecs)
	}
	return r.writeManifest()
}

// checkDim fixes the index dimension on the first vector and refuses
// vectors of another size, which chromem-go could not compare.
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

// store writes one tool to chromem-go (one file when persisted). The
// contract is the document's metadata; the indexed text is not stored (it
// is derived from the contract), which keeps 50k documents in memory small.
func (r *Recommender) store(ctx context.Context, c contracts.Contract, f fields, v []float32) error {
	raw, err := json.Marshal(c)
	if err != nil {
		return contracts.Errorf(contracts.CodeInvalidContract, "encode contract %s: %w", c.Tool, err).With("tool", c.Tool)
	}
	doc := chromem.Document{
		ID:        c.Tool,
		Embedding: v,
		Metadata:  map[string]string{metaHash: f.hash(), metaContract: string(raw)},
	}
	if err := r.col.AddDocument(ctx, doc); err != nil {
		return contracts.Errorf(contracts.CodeInternal, "store tool %s: %w", c.Tool, err).With("tool", c.Tool)
	}
	return nil
}

// Remove drops tools from the index; unknown names are ignored (removal is
// idempotent, as catalog events may repeat).
func (r *Recommender) Remove(ctx context.Context, tools ...string) error {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, name := range tools {
		old, ok := r.tools[name]
		if !ok {
			continue
		}
		if err := r.col.Delete(ctx, nil, nil, name); err != nil {
			return contracts.Errorf(contracts.CodeInternal, "remove tool %s: %w", name, err).With("tool", name)
		}
		r.bySlot[r.lex.slots[name]] = nil
		r.vec.clear(r.lex.slots[name])
		r.sem.clear(r.lex.slots[name])
		r.lex.remove(name)
		if ca, ok := r.emb.(embed.CorpusAware); ok {
			ca.RemoveDocument(old.fields.text())
		}
		delete(r.tools, name)
	}
	return nil
}

// Stats reports the index size and the embedding work done so far.
func (r *Recommender) Stats() Stats {
	r.mu.RLock()
	defer r.mu.RUnlock()
	st := Stats{Tools: len(r.tools), Embedded: r.embedded.Load(), Rebuilt: r.rebuilt, Identity: r.emb.Identity()}
	if r.opts.Semantic != nil {
		st.Semantic = r.opts.Semantic.Identity()
	}
	return st
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
}

// Apply follows one catalog change.
func (r *Recommender) Apply(ctx context.Context, ev Change) error {
	switch ev.Kind {
	case Added, Changed:
		return r.Upsert(ctx, ev.Contract)
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

// semanticVectors embeds the named tools' texts with Options.Semantic in
// one batch (nil without it).
func (r *Recommender) semanticVectors(ctx context.Context, names []string, fs map[string]fields) (map[string][]float32, error) {
	if r.opts.Semantic == nil || len(names) == 0 {
		return nil, nil
	}
	texts := make([]string, len(names))
	for i, n := range names {
		texts[i] = fs[n].semanticText()
	}
	out, err := r.opts.Semantic.EmbedDocuments(ctx, texts)
	if err == nil && len(out) != len(texts) {
		err = fmt.Errorf("%d vectors for %d texts", len(out), len(texts))
	}
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeExternal, "semantic embedding of %d tools: %w", len(texts), err).With("embedder", r.opts.Semantic.Identity())
	}
	vecs := make(map[string][]float32, len(names))
	for i, n := range names {
		vecs[n] = out[i]
	}
	return vecs, nil
}

// embedSemantic gives the tools loaded from a persisted index their
// semantic vectors, which are not stored (embedding them is cheaper than
// reading them back).
func (r *Recommender) embedSemantic(ctx context.Context, cs []contracts.Contract) error {
	names := make([]string, 0, len(cs))
	fs := make(map[string]fields, len(cs))
	for _, c := range cs {
		if e, ok := r.tools[c.Tool]; ok {
			names = append(names, c.Tool)
			fs[c.Tool] = e.fields
		}
	}
	vecs, err := r.semanticVectors(ctx, names, fs)
	for n, v := range vecs {
		r.sem.set(r.lex.slots[n], v)
	}
	return err
}
