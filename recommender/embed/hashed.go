package embed

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/ordo-run/ordo/recommender/tokenize"
)

// HashedVersion changes whenever Hashed's features change, so persisted
// indexes built by an older version are rebuilt.
const HashedVersion = 3

// Hashed is the offline embedder: stemmed words, adjacent word pairs and
// character n-grams of each word, hashed with a sign bit into Dim buckets
// (the "hashing trick"), sub-linear TF, L2-normalised.
//
// IDF is learned from the indexed corpus, which changes as tools come and
// go. Document vectors are therefore stored WITHOUT IDF (a stored vector
// never goes stale) and the query carries the weighting: each query bucket is
// multiplied by idf², which gives the TF-IDF dot product up to each
// document's norm. Adding one tool thus re-embeds that tool only.
//
// A Hashed value belongs to one index (it holds that index's statistics) and
// is safe for concurrent use.
type Hashed struct {
	dim                 int
	minGram, maxGram    int
	wordW, pairW, gramW float64
	mu                  sync.RWMutex
	df                  []int32
	docs                int
}

// HashedOptions tunes Hashed; zero fields take the defaults.
type HashedOptions struct {
	Dim              int     // buckets, default 256 (latency: chromem-go scans every vector)
	MinGram, MaxGram int     // character n-gram sizes, default 3..5
	WordWeight       float64 // default 1
	PairWeight       float64 // adjacent word pairs, default 0.5
	GramWeight       float64 // per word's n-grams in total, default 2
}

// NewHashed returns an offline embedder.
func NewHashed(o HashedOptions) *Hashed {
	def := func(v, d int) int {
		if v <= 0 {
			return d
		}
		return v
	}
	deff := func(v, d float64) float64 {
		if v <= 0 {
			return d
		}
		return v
	}
	h := &Hashed{
		dim:     def(o.Dim, 256),
		minGram: def(o.MinGram, 3),
		maxGram: def(o.MaxGram, 5),
		wordW:   deff(o.WordWeight, 1),
		pairW:   deff(o.PairWeight, 0.5),
		gramW:   deff(o.GramWeight, 2),
	}
	if h.maxGram < h.minGram {
		h.maxGram = h.minGram
	}
	h.df = make([]int32, h.dim)
	return h
}

// Identity implements Embedder.
func (h *Hashed) Identity() string {
	return fmt.Sprintf("hashed/v%d dim=%d grams=%d-%d w=%g,%g,%g", HashedVersion, h.dim, h.minGram, h.maxGram, h.wordW, h.pairW, h.gramW)
}

// EmbedDocuments implements Embedder: IDF-free vectors.
func (h *Hashed) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = h.document(tokenize.Words(t))
	}
	return out, nil
}

// EmbedWords implements WordEmbedder.
func (h *Hashed) EmbedWords(docs [][]string) [][]float32 {
	out := make([][]float32, len(docs))
	for i, ws := range docs {
		out[i] = h.document(ws)
	}
	return out
}

func (h *Hashed) document(words []string) []float32 {
	v := h.features(words)
	if isZero(v) {
		// A text with no content words still needs a storable vector:
		// a fixed unit bucket, orthogonal-ish to every real text.
		v[0] = 1
	}
	return normalise(v)
}

// EmbedQuery implements Embedder: the query weighted by idf² of the corpus.
func (h *Hashed) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v := h.features(tokenize.Words(text))
	h.mu.RLock()
	n := float64(h.docs)
	for b, x := range v {
		if x == 0 {
			continue
		}
		idf := math.Log(1 + (n-float64(h.df[b])+0.5)/(float64(h.df[b])+0.5))
		v[b] = x * idf * idf
	}
	h.mu.RUnlock()
	return normalise(v), nil
}

// AddVector implements CorpusAware: a document holds the buckets its
// vector does not leave at zero.
func (h *Hashed) AddVector(v []float32) { h.count(v, 1) }

// RemoveVector implements CorpusAware.
func (h *Hashed) RemoveVector(v []float32) { h.count(v, -1) }

func (h *Hashed) count(v []float32, delta int32) {
	if len(v) != h.dim {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.docs += int(delta)
	for b, x := range v {
		if x != 0 {
			h.df[b] += delta
		}
	}
}

// features returns the raw sub-linear TF vector of a text's words. Each
// feature is FNV-1a 64 of "kind:" and its parts, hashed in place (no
// strings built): this loop is most of the index build time.
func (h *Hashed) features(words []string) []float64 {
	v := make([]float64, h.dim)
	add := func(x uint64, w float64) {
		b := int(x % uint64(h.dim))
		if x>>63 == 1 {
			w = -w
		}
		v[b] += w
	}
	for i, w := range words {
		add(fnv(fnvOffset, "w:", w), h.wordW)
		if i > 0 {
			add(fnv(fnv(fnvOffset, "p:", words[i-1]), " ", w), h.pairW)
		}
		padded := "#" + w + "#"
		n := h.gramCount(len(padded))
		h.eachGram(padded, func(g string) { add(fnv(fnvOffset, "g:", g), h.gramW/float64(n)) })
	}
	for b, x := range v {
		// Sub-linear TF keeps a repeated word from dominating.
		v[b] = math.Copysign(math.Log1p(math.Abs(x)), x)
	}
	return v
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnv continues an FNV-1a 64 hash x over the bytes of a and then b.
func fnv(x uint64, a, b string) uint64 {
	for i := 0; i < len(a); i++ {
		x = (x ^ uint64(a[i])) * fnvPrime
	}
	for i := 0; i < len(b); i++ {
		x = (x ^ uint64(b[i])) * fnvPrime
	}
	return x
}

// gramCount is how many grams eachGram yields for a word of length n.
func (h *Hashed) gramCount(n int) int {
	c := 0
	for g := h.minGram; g <= h.maxGram && g <= n; g++ {
		c += n - g + 1
	}
	return max(c, 1)
}

// eachGram calls f with every character n-gram of w (sizes minGram to
// maxGram), or with w itself when it is shorter than minGram.
func (h *Hashed) eachGram(w string, f func(string)) {
	if len(w) < h.minGram {
		f(w)
		return
	}
	for n := h.minGram; n <= h.maxGram; n++ {
		for i := 0; i+n <= len(w); i++ {
			f(w[i : i+n])
		}
	}
}

// normalise returns v as a unit float32 vector; all zeros stays zero (the
// caller decides what an empty text means).
func normalise(v []float64) []float32 {
	var sum float64
	for _, x := range v {
		sum += x * x
	}
	out := make([]float32, len(v))
	if sum == 0 {
		return out
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range v {
		out[i] = float32(x * inv)
	}
	return out
}

func isZero(v []float64) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}
