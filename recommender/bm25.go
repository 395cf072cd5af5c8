package recommender

import (
	"math"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/ordo-run/ordo/recommender/tokenize"
)

// bm25 is an Okapi BM25 index with per-field term weights (a simple BM25F):
// a name word counts NameWeight times, a parameter word ParamWeight times.
// It lives in memory and is rebuilt from the stored text at start-up, which
// is cheap next to embedding. Tools get dense slot numbers so scoring
// accumulates into a slice instead of a map.
type bm25 struct {
	k1, b        float64
	nameW, paraW float64
	postings     map[string][]posting // term -> tools having it
	cf           map[string]float64   // term -> weighted count over all tools
	slots        map[string]int       // tool -> slot
	names        []string             // slot -> tool ("" = free)
	lengths      []float64            // slot -> weighted length
	terms        [][]string           // slot -> its terms, for removal
	free         []int
	total        float64
	live         int
}

type posting struct {
	slot int
	tf   float64
}

func newBM25(r Ranking) *bm25 {
	return &bm25{k1: r.K1, b: r.B, nameW: r.NameWeight, paraW: r.ParamWeight,
		postings: map[string][]posting{}, cf: map[string]float64{}, slots: map[string]int{}}
}

func (x *bm25) termFreqs(f fields) map[string]float64 {
	tf := map[string]float64{}
	for _, w := range tokenize.NameWords(f.Name) {
		tf[w] += x.nameW
	}
	for _, part := range []struct {
		text string
		w    float64
	}{{f.Description, 1}, {f.Params, x.paraW}} {
		for _, w := range tokenize.Words(part.text) {
			tf[w] += part.w
		}
	}
	return tf
}

// add indexes a tool, replacing any earlier version.
func (x *bm25) add(tool string, f fields) {
	x.remove(tool)
	slot := len(x.names)
	if n := len(x.free); n > 0 {
		slot, x.free = x.free[n-1], x.free[:n-1]
	} else {
		x.names, x.lengths, x.terms = append(x.names, ""), append(x.lengths, 0), append(x.terms, nil)
	}
	var n float64
	tf := x.termFreqs(f)
	terms := make([]string, 0, len(tf))
	for t, c := range tf {
		terms = append(terms, t)
		x.postings[t] = append(x.postings[t], posting{slot: slot, tf: c})
		x.cf[t] += c
		n += c
	}
	x.slots[tool], x.names[slot], x.lengths[slot], x.terms[slot] = slot, tool, n, terms
	x.total += n
	x.live++
}

func (x *bm25) remove(tool string) {
	slot, ok := x.slots[tool]
	if !ok {
		return
	}
	for _, t := range x.terms[slot] {
		p := x.postings[t]
		for i := range p {
			if p[i].slot == slot {
				x.cf[t] -= p[i].tf
				p[i] = p[len(p)-1]
				p = p[:len(p)-1]
				break
			}
		}
		if len(p) == 0 {
			delete(x.postings, t)
			delete(x.cf, t)
		} else {
			x.postings[t] = p
		}
	}
	x.total -= x.lengths[slot]
	x.names[slot], x.lengths[slot], x.terms[slot] = "", 0, nil
	x.free = append(x.free, slot)
	delete(x.slots, tool)
	x.live--
}

// score adds the BM25 score of every tool sharing a term with the query
// words into acc (by slot, all zero on entry) and returns the slots it
// touched that pass keep (nil keeps all); the others are zeroed again.
// Slices, not maps: a common query word touches thousands of tools.
func (x *bm25) score(words []string, keep func(slot int) bool, acc []float64) (touched []int) {
	if x.live == 0 {
		return nil
	}
	n := float64(x.live)
	avg := x.total / n
	for i, t := range words {
		if slices.Contains(words[:i], t) {
			continue
		}
		p := x.postings[t]
		if len(p) == 0 {
			continue
		}
		idf := math.Log(1 + (n-float64(len(p))+0.5)/(float64(len(p))+0.5))
		for _, e := range p {
			norm := x.k1 * (1 - x.b + x.b*x.lengths[e.slot]/avg)
			if acc[e.slot] == 0 {
				touched = append(touched, e.slot)
			}
			acc[e.slot] += idf * e.tf * (x.k1 + 1) / (e.tf + norm)
		}
	}
	if keep == nil {
		return touched
	}
	kept := touched[:0]
	for _, s := range touched {
		if keep(s) {
			kept = append(kept, s)
		} else {
			acc[s] = 0
		}
	}
	return kept
}

// covered is the share of the request's words (by letters, so a long
// word weighs more than a particle) that some indexed tool holds. It says
// how much of a request the index can see at all: near 0 for a request in
// another script than the descriptions', whatever the ranking then does.
func (x *bm25) covered(words []string) float64 {
	var all, seen int
	for _, w := range words {
		n := utf8.RuneCountInString(w)
		all += n
		if len(x.postings[w]) > 0 {
			seen += n
		}
	}
	if all == 0 {
		return 0
	}
	return float64(seen) / float64(all)
}

// scaledLikelihood is likelihood in 0..1: from the score of an
// average-length tool holding none of the words (0; lower clamps to 0) to
// the best of slots (1). Min-max over the tools at hand instead collapsed
// when few tools share a word: the only two matches became 1 and 0 however
// close they were.
func (x *bm25) scaledLikelihood(words []string, mu float64, slots []int) []float64 {
	ql, known := x.likelihood(words, mu, slots)
	if len(ql) == 0 {
		return ql
	}
	top := slices.Max(ql)
	base := float64(known) * math.Log(mu/(x.total/float64(x.live)+mu))
	for i, q := range ql {
		ql[i] = 1
		if top > base {
			ql[i] = math.Max(0, (q-base)/(top-base))
		}
	}
	return ql
}

// share is the IDF-weighted share of words (distinct, known to the index)
// that slot's text holds, 0..1: a tool's relevance to one text.
func (x *bm25) share(slot int, words []string) float64 {
	var all, held float64
	n := float64(x.live)
	for i, t := range words {
		p := x.postings[t]
		if len(p) == 0 || slices.Contains(words[:i], t) {
			continue
		}
		idf := math.Log(1 + (n-float64(len(p))+0.5)/(float64(len(p))+0.5))
		all += idf
		if slices.Contains(x.terms[slot], t) {
			held += idf
		}
	}
	if all == 0 {
		return 0
	}
	return held / all
}

// scratch lends zeroed per-slot accumulators to a search; give them back
// zeroed at the slots used, so a 50k-tool index does not clear 400 kB per
// ranked list.
var scratch sync.Pool

func borrow(n int) []float64 {
	if p, ok := scratch.Get().(*[]float64); ok && len(*p) >= n {
		return (*p)[:n]
	}
	return make([]float64, n)
}

func giveBack(acc []float64, used []int) {
	for _, s := range used {
		acc[s] = 0
	}
	scratch.Put(&acc)
}

// likelihood scores the given slots by query likelihood with Dirichlet
// smoothing (Zhai and Lafferty 2001), in its rank-equivalent form
//
//	Σ_{w in q} log(1 + tf(w,d) / (μ·P(w|C))) + |q|·log(μ / (|d| + μ))
//
// over the query words the index knows (repeats count). It penalises long
// tools by a different law than BM25's length normalisation, which is
// what makes it worth fusing. Scores are log-likelihood ratios of either
// sign, in the order of slots; known is how many query words the index
// knows.
func (x *bm25) likelihood(words []string, mu float64, slots []int) (out []float64, known int) {
	acc := borrow(len(x.names))
	defer func() {
		for _, t := range words {
			for _, e := range x.postings[t] {
				acc[e.slot] = 0
			}
		}
		scratch.Put(&acc)
	}()
	for _, t := range words {
		p := x.postings[t]
		if len(p) == 0 {
			continue
		}
		known++
		pc := x.cf[t] / x.total
		for _, e := range p {
			acc[e.slot] += math.Log(1 + e.tf/(mu*pc))
		}
	}
	out = make([]float64, len(slots))
	for i, s := range slots {
		out[i] = acc[s] + float64(known)*math.Log(mu/(x.lengths[s]+mu))
	}
	return out, known
}
