package patterns

import (
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	chromem "github.com/philippgille/chromem-go"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/ids"
	"github.com/ordo-run/ordo/recommender/embed"
)

const (
	manifestName = "ordo-patterns.json"
	// storeFormat changes when the stored document layout changes.
	storeFormat = 1
)

// Metadata keys of each chromem document; every key but metaRecord is also
// a where-filter.
const (
	metaUser   = "user"
	metaKey    = "key" // the exact part of the consolidation key: tool, plan shape or template name
	metaRecord = "record"
)

// Options tune consolidation and the queries; zero fields take defaults.
type Options struct {
	// Similarity is the cosine above which a new observation updates a
	// stored record instead of adding one (default 0.85). Clarifications
	// are only offered for goals this similar.
	Similarity float64
	// MinSimilarity is how similar a stored goal or step must be to count
	// as evidence for planner examples and tool advice (default 0.5).
	MinSimilarity float64
	// AvoidAfter is how many failures mark a tool should_avoid for a step,
	// when it also fails more often than it succeeds (default 3).
	AvoidAfter int
	// BoostWeight scales a tool's confidence into its recommender boost
	// (default 0.3).
	BoostWeight float64
	// AutoReuseCount and AutoReuseConfidence: a clarification is reused
	// without asking once both are reached (defaults 5 and 0.9).
	AutoReuseCount      int
	AutoReuseConfidence float64
	// AutoApproveAbove: a step is predicted accepted above this
	// probability (default 0.8).
	AutoApproveAbove float64
	// MaxRecords bounds one user's records in a namespace (default
	// 5000): past it the least recently used tenth are forgotten, except
	// templates, where a new name is refused (makeRoom).
	MaxRecords int
	// Logger receives maintenance messages; nil means slog.Default().
	Logger *slog.Logger
}

func (o *Options) defaults() error {
	setF := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	setF(&o.Similarity, 0.85)
	setF(&o.MinSimilarity, 0.5)
	setF(&o.BoostWeight, 0.3)
	setF(&o.AutoReuseConfidence, 0.9)
	setF(&o.AutoApproveAbove, 0.8)
	if o.AvoidAfter == 0 {
		o.AvoidAfter = 3
	}
	if o.AutoReuseCount == 0 {
		o.AutoReuseCount = 5
	}
	if o.MaxRecords == 0 {
		o.MaxRecords = 5000
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	unit := func(field string, v float64) error {
		if math.IsNaN(v) || v < 0 || v > 1 {
			return contracts.Errorf(contracts.CodeInvalidConfig, "memory option %s must lie in 0..1, got %v", field, v).With("field", field)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"similarity", o.Similarity}, {"min_similarity", o.MinSimilarity}, {"boost_weight", o.BoostWeight},
		{"auto_reuse_confidence", o.AutoReuseConfidence}, {"auto_approve_above", o.AutoApproveAbove}} {
		if err := unit(f.name, f.v); err != nil {
			return err
		}
	}
	if o.AvoidAfter < 0 {
		return contracts.Errorf(contracts.CodeInvalidConfig, "memory option avoid_after must not be negative").With("field", "avoid_after")
	}
	if o.MaxRecords < 0 {
		return contracts.Errorf(contracts.CodeInvalidConfig, "memory option max_records must not be negative").With("field", "max_records")
	}
	if o.AutoReuseCount < 0 {
		return contracts.Errorf(contracts.CodeInvalidConfig, "memory option auto_reuse_count must not be negative").With("field", "auto_reuse_count")
	}
	return nil
}

// Memory is the pattern store. It is safe for concurrent use: writes
// (which read, consolidate and write back) are serialised, reads are not.
type Memory struct {
	dir  string
	emb  embed.Embedder
	opts Options
	log  *slog.Logger
	db   *chromem.DB
	cols map[Namespace]*chromem.Collection
	mu   sync.Mutex // serialises writes
	// counts is how many records each user has in each namespace, as far
	// as known (makeRoom); guarded by mu.
	counts map[owner]int
	dim    atomic.Int64 // vector dimension; 0 until the first vector
	// manifestOK: the manifest on disk names this embedder and dimension.
	manifestOK atomic.Bool
}

// Open opens (or creates) the pattern store persisted in dir; "" keeps it
// in memory. emb nil means the offline hashed embedder. If the store was
// written by another embedder, every record is re-embedded with emb.
func Open(dir string, emb embed.Embedder, opts Options) (*Memory, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	if emb == nil {
		emb = embed.NewHashed(embed.HashedOptions{})
	}
	m := &Memory{dir: dir, emb: emb, opts: opts, log: opts.Logger, cols: map[Namespace]*chromem.Collection{},
		counts: map[owner]int{}}
	if dir == "" {
		m.db = chromem.NewDB()
	} else {
		restorePrev(dir, opts.Logger)
		db, err := chromem.NewPersistentDB(dir, false)
		if err != nil && setAsideCut(dir, opts.Logger) > 0 {
			db, err = chromem.NewPersistentDB(dir, false)
		}
		if err != nil {
			return nil, contracts.Errorf(contracts.CodeInvalidConfig, "open pattern memory: %w", err).With("dir", dir)
		}
		m.db = db
	}
	old, err := m.readManifest()
	if err != nil {
		return nil, err
	}
	for _, ns := range Namespaces {
		col, err := m.db.GetOrCreateCollection(string(ns), nil, noEmbedding)
		if err != nil {
			return nil, contracts.Errorf(contracts.CodeStore, "open %s memory: %w", ns, err)
		}
		m.cols[ns] = col
	}
	if err := m.reconcile(context.Background(), old); err != nil {
		return nil, err
	}
	return m, nil
}

// restorePrev puts back the records a killed process left moved aside
// while it rewrote them (add): NAME.gob.prev, the record before the write,
// replaces a NAME.gob that is missing or cut off, and is removed beside one
// that reads whole. Like setAsideCut it waits cutWait first, so that a
// write another process is making right now is left alone.
func restorePrev(dir string, log *slog.Logger) {
	found, _ := filepath.Glob(filepath.Join(dir, "*", "*.gob"+prevSuffix))
	if len(found) == 0 {
		return
	}
	time.Sleep(cutWait)
	for _, prev := range found {
		if _, err := os.Stat(prev); err != nil {
			continue // its writer finished meanwhile
		}
		f := strings.TrimSuffix(prev, prevSuffix)
		if readGob(f, &chromem.Document{}) == nil {
			os.Remove(prev)
		} else if os.Rename(prev, f) == nil {
			log.Warn("pattern memory: a record cut off by a crash was put back as it was before", "file", f)
		}
	}
}

// chromemMeta is the file in which chromem-go keeps a collection's name.
const chromemMeta = "00000000.gob"

// setAsideCut makes a store that a killed process left cut off open again,
// and returns how many files it set aside. chromem-go writes a file by
// truncating it first, so a kill mid-write leaves a file it cannot read,
// and then refuses to open the store. A record it cannot read is renamed
// NAME.gob.cut (chromem-go reads only *.gob); a collection whose name was
// cut off while it was created, before any record, is removed, and made
// again. A file is looked at twice, cutWait apart, so that one another
// process is writing right now is left alone. Pattern memory is learned
// from finished runs: a record lost this way is a lost hint, never a run's
// work.
func setAsideCut(dir string, log *slog.Logger) int {
	cut := cutFiles(dir)
	if len(cut) == 0 {
		return 0
	}
	time.Sleep(cutWait)
	n := 0
	for _, f := range cutFiles(dir) {
		if !slices.Contains(cut, f) {
			continue
		}
		var err error
		if filepath.Base(f) == chromemMeta {
			err = os.RemoveAll(filepath.Dir(f))
		} else {
			err = os.Rename(f, f+".cut")
		}
		if err == nil {
			n++
			log.Warn("pattern memory: a file cut off by a crash was set aside", "file", f)
		}
	}
	return n
}

// cutWait is how long a file setAsideCut found unreadable has to become
// readable (another process finishing its write) before it is set aside.
const cutWait = 200 * time.Millisecond

// cutFiles are the files of the store in dir that chromem-go cannot read:
// records, and the metadata of collections that hold no record.
func cutFiles(dir string) []string {
	var out []string
	cols, _ := os.ReadDir(dir)
	for _, c := range cols {
		if !c.IsDir() {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(dir, c.Name(), "*.gob"))
		for _, f := range files {
			meta := filepath.Base(f) == chromemMeta
			var v any = &chromem.Document{}
			if meta {
				v = &struct {
					Name     string
					Metadata map[string]string
				}{}
			}
			if readGob(f, v) != nil && (!meta || len(files) == 1) {
				out = append(out, f)
			}
		}
	}
	return out
}

// readGob decodes the gob file f into v.
func readGob(f string, v any) error {
	r, err := os.Open(f)
	if err != nil {
		return err
	}
	defer r.Close()
	return gob.NewDecoder(r).Decode(v)
}

// noEmbedding is every collection's embedding function: Memory always
// passes vectors, and a nil function would make chromem-go call OpenAI.
func noEmbedding(context.Context, string) ([]float32, error) {
	return nil, errors.New("patterns: chromem-go must not embed by itself")
}

func (m *Memory) manifestPath() string { return filepath.Join(m.dir, manifestName) }

func (m *Memory) readManifest() (embed.Manifest, error) {
	if m.dir == "" {
		return embed.Manifest{}, nil
	}
	mf, err := embed.ReadManifest(m.manifestPath())
	if _, unreadable := errors.AsType[*fs.PathError](err); err != nil && !unreadable {
		// Cut off (a power cut after its rename) or garbled: as good as
		// none, which reconcile mends.
		m.log.Warn("pattern memory: its manifest does not parse", "path", m.manifestPath(), "err", err)
		return embed.Manifest{}, nil
	}
	if err != nil {
		return mf, contracts.Errorf(contracts.CodeInvalidConfig, "read pattern memory manifest: %w", err).With("path", m.manifestPath())
	}
	return mf, nil
}

func (m *Memory) writeManifest() error {
	if m.dir == "" {
		return nil
	}
	mf := embed.Manifest{Format: storeFormat, Identity: m.emb.Identity(), Dim: int(m.dim.Load())}
	if err := embed.WriteManifest(m.manifestPath(), mf); err != nil {
		return contracts.Errorf(contracts.CodeStore, "write pattern memory manifest: %w", err)
	}
	return nil
}

// reconcile adopts the stored dimension, or re-embeds every record when the
// store was written by another embedder (vectors of two models are never
// compared) or its manifest is gone, writing the manifest last.
func (m *Memory) reconcile(ctx context.Context, old embed.Manifest) error {
	total := 0
	for _, col := range m.cols {
		total += col.Count()
	}
	if total == 0 {
		return nil
	}
	if old.Format > storeFormat {
		return contracts.Errorf(contracts.CodeStore, "pattern memory in %s is format %d, newer than this build knows (%d)",
			m.dir, old.Format, storeFormat).With("dir", m.dir)
	}
	if old.Format == storeFormat && old.Dim > 0 {
		m.dim.Store(int64(old.Dim))
		if old.Identity == m.emb.Identity() {
			m.manifestOK.Store(true)
			return nil
		}
		m.log.Info("embedder changed; re-embedding pattern memory", "old", old.Identity, "new", m.emb.Identity(), "records", total)
	} else {
		m.log.Warn("pattern memory has no usable manifest; re-embedding its records", "dir", m.dir, "records", total)
	}
	var all []Record
	for _, ns := range Namespaces {
		rs, err := m.stored(ns)
		if err != nil {
			return err
		}
		all = append(all, rs...)
	}
	// The manifest names the new embedder only once every record has its
	// vectors: one cut off part way (a kill, the embedder failing) still
	// names the old one, so the next Open re-embeds again.
	m.dim.Store(0)
	m.manifestOK.Store(true)
	for _, r := range all {
		if err := m.put(ctx, r); err != nil {
			return err
		}
	}
	return m.writeManifest()
}

// stored reads every record of ns from its files: re-embedding cut off
// part way leaves vectors of two sizes, which no query can scan.
func (m *Memory) stored(ns Namespace) ([]Record, error) {
	files, err := filepath.Glob(filepath.Join(m.dir, hash2hex(string(ns)), "*.gob"))
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeStore, "read %s memory: %w", ns, err)
	}
	var out []Record
	for _, f := range files {
		if filepath.Base(f) == chromemMeta {
			continue
		}
		var d chromem.Document
		if err := readGob(f, &d); err != nil {
			return nil, contracts.Errorf(contracts.CodeStore, "read %s memory: %w", ns, err).With("file", f)
		}
		r, err := decodeRecord(d.Metadata[metaRecord])
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// embed returns the vector of one text. Stored and query texts are embedded
// alike (EmbedDocuments), so a similarity is an absolute cosine that a fixed
// threshold can be set against; an IDF-weighted query would shift with the
// corpus.
func (m *Memory) embed(ctx context.Context, text string) ([]float32, error) {
	out, err := m.emb.EmbedDocuments(ctx, []string{text})
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeExternal, "embed memory text: %w", err).With("embedder", m.emb.Identity())
	}
	if len(out) != 1 || len(out[0]) == 0 {
		return nil, contracts.Errorf(contracts.CodeExternal, "embedder returned no vector").With("embedder", m.emb.Identity())
	}
	v := out[0]
	if m.dim.CompareAndSwap(0, int64(len(v))) || m.dim.Load() == int64(len(v)) {
		return v, nil
	}
	return nil, contracts.Errorf(contracts.CodeExternal, "embedder returned %d dimensions, memory has %d", len(v), m.dim.Load()).With("embedder", m.emb.Identity())
}

// put writes r (new or updated) with a fresh vector of its text.
func (m *Memory) put(ctx context.Context, r Record) error {
	v, err := m.embed(ctx, r.Text)
	if err != nil {
		return err
	}
	return m.store(ctx, r, v)
}

// store writes r with v, the vector of r.Text.
func (m *Memory) store(ctx context.Context, r Record, v []float32) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return contracts.Errorf(contracts.CodeInvalidInput, "encode memory record: %w", err).With("namespace", r.Namespace)
	}
	doc := chromem.Document{ID: r.ID, Content: r.Text, Embedding: v,
		Metadata: map[string]string{metaUser: r.User, metaKey: keyOf(r), metaRecord: string(raw)}}
	// The manifest first: records without one would refuse every later
	// Open (a full disk between the two did).
	if !m.manifestOK.Load() {
		if err := m.writeManifest(); err != nil {
			return err
		}
		m.manifestOK.Store(true)
	}
	col := m.cols[r.Namespace]
	prev, errPrev := col.GetByID(ctx, r.ID)
	if err := m.add(ctx, col, doc); err != nil {
		// The process must not keep what the disk refused either.
		if errPrev == nil {
			_ = m.add(ctx, col, prev)
		} else {
			_ = col.Delete(ctx, nil, nil, r.ID)
		}
		return contracts.Errorf(contracts.CodeStore, "store %s memory: %w", r.Namespace, err).With("id", r.ID)
	}
	return nil
}

// prevSuffix marks a record's file moved aside while it is rewritten (add).
const prevSuffix = ".prev"

// add writes doc through chromem-go, which truncates a record's file before
// it writes the new version: a full disk or a kill in between would leave
// neither version, and the next Open would set the cut file aside (a
// template a person saved, gone). So the file is moved aside first, put
// back if the write fails and removed once it succeeded; Open puts back
// one a kill left aside (restorePrev).
func (m *Memory) add(ctx context.Context, col *chromem.Collection, doc chromem.Document) error {
	if m.dir == "" {
		return col.AddDocument(ctx, doc)
	}
	path := filepath.Join(m.dir, hash2hex(col.Name), hash2hex(doc.ID)+".gob")
	moved := os.Rename(path, path+prevSuffix) == nil
	err := col.AddDocument(ctx, doc)
	switch {
	case !moved:
	case err != nil:
		os.Rename(path+prevSuffix, path)
	default:
		os.Remove(path + prevSuffix)
	}
	return err
}

// hash2hex is how chromem-go names a collection's directory and a
// record's file: the first 4 bytes of the name's SHA-256, in hex.
func hash2hex(name string) string {
	h := sha256.Sum256([]byte(name))
	return hex.EncodeToString(h[:4])
}

// keyOf is the exact part of a record's consolidation key.
func keyOf(r Record) string {
	switch r.Namespace {
	case NSTool, NSBehavior:
		return r.Tool
	case NSPlan:
		return planShape(r.Plan)
	case NSWorkflow:
		return r.Name
	}
	return ""
}

// match is a stored record with its similarity to a query and its stored
// vector (shared with chromem-go: never modify it).
type match struct {
	Record
	sim float64
	vec []float32
}

// nearest returns up to n records of ns matching where, most similar to
// text first. chromem-go refuses n outside 1..Count(), so n is clamped.
func (m *Memory) nearest(ctx context.Context, ns Namespace, where map[string]string, text string, n int) ([]match, error) {
	col := m.cols[ns]
	count := col.Count()
	if count == 0 || n <= 0 {
		return nil, nil
	}
	v, err := m.embed(ctx, text)
	if err != nil {
		return nil, err
	}
	return m.nearestTo(ctx, ns, where, v, n)
}

// nearestTo is nearest for an embedded query.
func (m *Memory) nearestTo(ctx context.Context, ns Namespace, where map[string]string, v []float32, n int) ([]match, error) {
	col := m.cols[ns]
	count := col.Count()
	if count == 0 || n <= 0 {
		return nil, nil
	}
	return m.query(ctx, ns, "query", v, min(n, count), where)
}

// query is chromem-go's query of ns's n records nearest to v matching
// where, decoded; an unreadable record is logged and left out. op names
// the query in an error.
func (m *Memory) query(ctx context.Context, ns Namespace, op string, v []float32, n int, where map[string]string) ([]match, error) {
	res, err := m.cols[ns].QueryEmbedding(ctx, v, n, where, nil)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeStore, "%s %s memory: %w", op, ns, err)
	}
	out := make([]match, 0, len(res))
	for _, d := range res {
		r, err := decodeRecord(d.Metadata[metaRecord])
		if err != nil {
			m.log.Warn("skipping unreadable memory record", "namespace", ns, "id", d.ID, "err", err)
			continue
		}
		out = append(out, match{r, float64(d.Similarity), d.Embedding})
	}
	return out, nil
}

// scan returns every record of ns matching where. chromem-go has no listing
// call, so one query for Count() results with any vector of the stored
// dimension enumerates the collection.
func (m *Memory) scan(ctx context.Context, ns Namespace, where map[string]string) ([]Record, error) {
	col := m.cols[ns]
	count := col.Count()
	dim := int(m.dim.Load())
	if count == 0 || dim == 0 {
		return nil, nil
	}
	probe := make([]float32, dim)
	probe[0] = 1
	ms, err := m.query(ctx, ns, "list", probe, count, where)
	if err != nil {
		return nil, err
	}
	out := make([]Record, len(ms))
	for i, x := range ms {
		out[i] = x.Record
	}
	return out, nil
}

// List returns the user's records in ns ("" for every namespace), most
// recently used first.
func (m *Memory) List(ctx context.Context, user string, ns Namespace) ([]Record, error) {
	if err := checkName("user", user, true); err != nil {
		return nil, err
	}
	spaces, err := selectNamespaces(ns)
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, n := range spaces {
		rs, err := m.scan(ctx, n, map[string]string{metaUser: user})
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	slices.SortFunc(out, func(a, b Record) int {
		if c := b.LastUsed.Compare(a.LastUsed); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

func selectNamespaces(ns Namespace) ([]Namespace, error) {
	if ns == "" {
		return Namespaces, nil
	}
	if !knownNamespace(ns) {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "unknown memory namespace %q", ns).With("field", "namespace")
	}
	return []Namespace{ns}, nil
}

// Show returns one of the user's records by id. Another user's record is
// reported as missing, like one that does not exist.
func (m *Memory) Show(ctx context.Context, user, id string) (Record, error) {
	if err := checkName("user", user, true); err != nil {
		return Record{}, err
	}
	if err := checkName("id", id, false); err != nil {
		return Record{}, err
	}
	for _, ns := range Namespaces {
		d, err := m.cols[ns].GetByID(ctx, id)
		if err != nil || d.Metadata[metaUser] != user {
			continue
		}
		return decodeRecord(d.Metadata[metaRecord])
	}
	return Record{}, contracts.Errorf(contracts.CodeInvalidInput, "no memory record %q for this user", id).With("field", "id")
}

// Forget deletes the user's records in ns ("" for every namespace) and
// returns how many it deleted. With an id it deletes that record only (in
// the workflow namespace the id may also be a template name); an id that
// matches nothing is an error naming the id, so a typo is not mistaken for
// success.
func (m *Memory) Forget(ctx context.Context, user string, ns Namespace, id string) (int, error) {
	if err := checkName("user", user, true); err != nil {
		return 0, err
	}
	if err := checkName("id", id, true); err != nil {
		return 0, err
	}
	spaces, err := selectNamespaces(ns)
	if err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	deleted := 0
	for _, n := range spaces {
		rs, err := m.scan(ctx, n, map[string]string{metaUser: user})
		if err != nil {
			return deleted, err
		}
		var ids []string
		for _, r := range rs {
			if id == "" || r.ID == id || (n == NSWorkflow && r.Name == id) {
				ids = append(ids, r.ID)
			}
		}
		if len(ids) == 0 {
			continue
		}
		if err := m.cols[n].Delete(ctx, nil, nil, ids...); err != nil {
			return deleted, contracts.Errorf(contracts.CodeStore, "forget %s memory: %w", n, err)
		}
		deleted += len(ids)
		delete(m.counts, owner{n, user})
	}
	if id != "" && deleted == 0 {
		return 0, contracts.Errorf(contracts.CodeInvalidInput, "no memory record %q for this user", id).With("field", "id")
	}
	return deleted, nil
}

// owner is one user's records in one namespace.
type owner struct {
	ns   Namespace
	user string
}

// makeRoom is called before a new record of user's is stored in ns, and
// keeps a user's records in a namespace to Options.MaxRecords: every query
// of every user filters a whole collection, so one user's growth must not
// slow everyone. When full, the least recently used tenth are forgotten;
// templates are what people saved, so there it reports false instead and
// nothing is forgotten. Caller holds m.mu.
func (m *Memory) makeRoom(ctx context.Context, ns Namespace, user string) (bool, error) {
	k := owner{ns, user}
	n, known := m.counts[k]
	if !known || n >= m.opts.MaxRecords {
		rs, err := m.scan(ctx, ns, map[string]string{metaUser: user})
		if err != nil {
			return false, err
		}
		n = len(rs)
		if n >= m.opts.MaxRecords {
			if ns == NSWorkflow {
				m.counts[k] = n
				return false, nil
			}
			slices.SortFunc(rs, func(a, b Record) int { return b.LastUsed.Compare(a.LastUsed) })
			keep := max(0, m.opts.MaxRecords-max(1, m.opts.MaxRecords/10))
			ids := make([]string, 0, n-keep)
			for _, r := range rs[keep:] {
				ids = append(ids, r.ID)
			}
			if err := m.cols[ns].Delete(ctx, nil, nil, ids...); err != nil {
				delete(m.counts, k)
				return false, contracts.Errorf(contracts.CodeStore, "forget %s memory: %w", ns, err)
			}
			n = keep
		}
	}
	m.counts[k] = n + 1
	return true, nil
}

func newID() string {
	return ids.Hex(12)
}
