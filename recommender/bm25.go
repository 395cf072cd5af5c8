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
// Terms are interned to ids so a tool's words can be stored and reloaded
// without tokenising again (the index file keeps them), and tools get
// dense slot numbers so scoring accumulates into a slice instead of a map.
type bm25 struct {
	k1, b        float64
	nameW, paraW float64
	ids          map[string]int32 // term -> id (ids are never reused)
	vocab        []string         // id -> term
	postings     [][]posting      // id -> tools having it
	cf           []float64        // id -> weighted count over all tools
	slots        map[string]int   // tool -> slot
	names        []string         // slot -> tool ("" = free)
	lengths      []float64        // slot -> weighted length
	fields       []termFields     // slot -> its words, for removal, relevance and the index file
	free         []int
	total        float64
	live         int
}

type posting struct {
	slot int32
	tf   float32 // weighted counts are multiples of the field weights: exact
}

// termFields are a tool's words by field (name, description, parameters)
// as term ids, repeats kept.
type termFields [3][]int32

func newBM25(r Ranking) *bm25 {
	return &bm25{k1: r.K1, b: r.B, nameW: r.NameWeight, paraW: r.ParamWeight,
		ids: map[string]int32{}, slots: map[string]int{}}
}

// fieldWords tokenises a tool's fields once for both sides: the lexical
// index's words by field (a name of request verbs only keeps them, as
// tokenize.NameWords does) and tokenize.Words of the whole indexed text,
// for a WordEmbedder. No index state: callers run it outside the lock.
// A word counts at most MaxRepeats times in a field: a third party's
// description is untrusted, and one that says "send email" a thousand
// times would otherwise outrank the real email tool (and, by raising the
// average length, make every honest tool look short).
func fieldWords(f fields) (lex [3][]string, all []string) {
	name := capRepeats(tokenize.Words(f.Name))
	lex = [3][]string{name, capRepeats(tokenize.Words(f.Description)), capRepeats(tokenize.Words(f.Params))}
	all = slices.Concat(lex[0], lex[1], lex[2])
	if len(name) == 0 {
		lex[0] = tokenize.NameWords(f.Name)
	}
	return lex, all
}

// MaxRepeats is how many times one word of a tool's field is indexed;
// honest descriptions rarely say a word more than twice.
const MaxRepeats = 2

// capRepeats drops the occurrences of each word after its MaxRepeats-th,
// in place, keeping order.
func capRepeats(ws []string) []string {
	seen := make(map[string]int, len(ws))
	return slices.DeleteFunc(ws, func(w string) bool {
		seen[w]++
		return seen[w] > MaxRepeats
	})
}

// intern maps words to term ids, adding new terms.
func (x *bm25) intern(ws [3][]string) termFields {
	var tf termFields
	for i, field := range ws {
		tf[i] = make([]int32, len(field))
		for j, w := range field {
			tf[i][j] = x.internWord(w)
		}
	}
	return tf
}

// internWord is w's term id, added if new.
func (x *bm25) internWord(w string) int32 {
	id, ok := x.ids[w]
	if !ok {
		id = int32(len(x.vocab))
		x.ids[w] = id
		x.vocab = append(x.vocab, w)
		x.postings = append(x.postings, nil)
		x.cf = append(x.cf, 0)
	}
	return id
}

// add indexes a tool, replacing any earlier version.
func (x *bm25) add(tool string, tf termFields) {
	x.remove(tool)
	slot := len(x.names)
	if n := len(x.free); n > 0 {
		slot, x.free = x.free[n-1], x.free[:n-1]
	} else {
		x.names, x.lengths, x.fields = append(x.names, ""), append(x.lengths, 0), append(x.fields, termFields{})
	}
	counts := map[int32]float64{}
	for i, w := range [3]float64{x.nameW, 1, x.paraW} {
		for _, id := range tf[i] {
			counts[id] += w
		}
	}
	var n float64
	for id, c := range counts {
		x.postings[id] = append(x.postings[id], posting{slot: int32(slot), tf: float32(c)})
		x.cf[id] += c
		n += c
	}
	x.slots[tool], x.names[slot], x.lengths[slot], x.fields[slot] = slot, tool, n, tf
	x.total += n
	x.live++
}

func (x *bm25) remove(tool string) {
	slot, ok := x.slots[tool]
	if !ok {
		return
	}
	for _, field := range x.fields[slot] {
		for _, id := range field {
			p := x.postings[id]
			for i := range p {
				if int(p[i].slot) == slot {
					x.cf[id] -= float64(p[i].tf)
					p[i] = p[len(p)-1]
					x.postings[id] = p[:len(p)-1]
					break
				}
			}
		}
	}
	x.total -= x.lengths[slot]
	x.names[slot], x.lengths[slot], x.fields[slot] = "", 0, termFields{}
	x.free = append(x.free, slot)
	delete(x.slots, tool)
	x.live--
}

// has reports whether slot's text holds term id.
func (x *bm25) has(slot int, id int32) bool {
	for _, field := range x.fields[slot] {
		if slices.Contains(field, id) {
			return true
		}
	}
	return false
}

// known returns the postings of a query word (nil for a word no tool has).
func (x *bm25) known(w string) []posting {
	if id, ok := x.ids[w]; ok {
		return x.postings[id]
	}
	return nil
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
		p := x.known(t)
		if len(p) == 0 {
			continue
		}
		idf := math.Log(1 + (n-float64(len(p))+0.5)/(float64(len(p))+0.5))
		for _, e := range p {
			tf := float64(e.tf)
			norm := x.k1 * (1 - x.b + x.b*x.lengths[e.slot]/avg)
			if acc[e.slot] == 0 {
				touched = append(touched, int(e.slot))
			}
			acc[e.slot] += idf * tf * (x.k1 + 1) / (tf + norm)
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
		if len(x.known(w)) > 0 {
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
			ql[i] = max(0, (q-base)/(top-base))
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
		p := x.known(t)
		if len(p) == 0 || slices.Contains(words[:i], t) {
			continue
		}
		idf := math.Log(1 + (n-float64(len(p))+0.5)/(float64(len(p))+0.5))
		all += idf
		if x.has(slot, x.ids[t]) {
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
			for _, e := range x.known(t) {
				acc[e.slot] = 0
			}
		}
		scratch.Put(&acc)
	}()
	// A word's weighted counts take few values (multiples of half a word
	// with the default field weights), so their logs are computed once per
	// value and word, not once per tool.
	var logs [64]float64
	for _, t := range words {
		p := x.known(t)
		if len(p) == 0 {
			continue
		}
		known++
		pc := x.cf[x.ids[t]] / x.total
		clear(logs[:])
		for _, e := range p {
			k := int(e.tf * 2)
			if float32(k) != e.tf*2 || k >= len(logs) {
				acc[e.slot] += math.Log(1 + float64(e.tf)/(mu*pc))
				continue
			}
			if logs[k] == 0 {
				logs[k] = math.Log(1 + float64(e.tf)/(mu*pc))
			}
			acc[e.slot] += logs[k]
		}
	}
	out = make([]float64, len(slots))
	for i, s := range slots {
		out[i] = acc[s] + float64(known)*math.Log(mu/(x.lengths[s]+mu))
	}
	return out, known
}
