package recommender

import (
	"cmp"
	"container/heap"
	"context"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/recommender/tokenize"
)

// Ranking tunes how lexical and vector evidence are combined. The defaults
// were chosen on half of the development queries and checked on the other
// half (see docs/recommender.md).
type Ranking struct {
	K1, B       float64 // BM25 saturation and length normalisation
	NameWeight  float64 // a tool-name word counts this many description words
	ParamWeight float64 // a parameter word counts this many description words
	// VectorWeight is the vector score's share (0..1) in each list's fused
	// score; the rest is BM25. Both scores are divided by the list's best.
	VectorWeight float64
	// Candidates is how many tools each ranked list keeps.
	Candidates int
	// VectorPool is how many of the best lexical candidates of a text the
	// vector side scores; 0 scores every tool. Scoring a pool instead of
	// the whole catalog is what keeps a query in milliseconds at 50k tools.
	VectorPool int
	// ClauseMinWords: a clause needs this many content words to be searched
	// on its own; shorter pieces stay with their neighbour.
	ClauseMinWords int
	// WholeWeight weighs the whole request's list against each clause's list
	// when the lists are merged by reciprocal rank fusion with constant RRFK.
	WholeWeight float64
	RRFK        float64
	// ClauseVectors adds the vector side (hashed vectors) to each clause's
	// list, scored over the ClausePool best lexical candidates of that
	// clause: character grams then re-order the clause's own candidates
	// without bringing in tools it does not name (with the whole request's
	// pool of 2,000, Seal-Tools multi-tool Full@5 gained half as much).
	// xQuAD's finer pieces stay BM25 only: vectors there measured the
	// same, at twice the cost.
	ClauseVectors bool
	ClausePool    int
	// ClauseMax merges clause lists by each tool's best clause rank instead
	// of summing over clauses, so a tool near the top of many clauses does
	// not crowd out the one tool a single clause needs.
	ClauseMax bool
	// Diversity (λ, 0..1) re-orders compound requests (more than one
	// clause) so every piece of the request, split also at commas and a
	// bare "and", gets a tool near the top (xQuAD); 0 keeps the plain
	// fused order.
	Diversity float64
	// LikelihoodWeight is the share (0..1, with VectorWeight at most 1) of
	// Dirichlet-smoothed query likelihood with prior Mu in the whole
	// request's list; BM25 keeps the rest. Clause lists stay BM25 only.
	LikelihoodWeight, Mu float64
	// SemanticWeight is the share (0..1, with VectorWeight and
	// LikelihoodWeight at most 1) of Options.Semantic's similarity in the
	// whole request's list, scored over every allowed tool; ignored
	// without a semantic embedder.
	SemanticWeight float64
	// SemanticMin is the cosine a tool needs to enter the semantic list:
	// below it (unrelated texts score about 0-0.1 with the static
	// vectors) a small catalog would get every tool as a weak hit.
	SemanticMin float64
	// SemanticHeld is the share of SemanticWeight kept when the best
	// lexical tool holds every word of the request that the index knows:
	// the words then already name the tool, and a full meaning list
	// prefers a sibling of like meaning (`translateToCzech` /
	// `getRandomCzechPhrase`, `controlAppliance` / `makeCoffee`). With a
	// share h of the words held the weight is 1-(1-SemanticHeld)·h²: a
	// request the index barely sees keeps nearly all of it.
	SemanticHeld float64
}

// DefaultRanking is the tuned default.
func DefaultRanking() Ranking {
	return Ranking{K1: 2, B: 0.5, NameWeight: 3, ParamWeight: 0.5, VectorWeight: 0.2,
		Candidates: 50, VectorPool: 2000, ClauseMinWords: 2, ClauseVectors: true, ClausePool: 100, WholeWeight: 1, RRFK: 1, ClauseMax: true, Diversity: 0.7,
		LikelihoodWeight: 0.15, Mu: 1000, SemanticWeight: 0.3, SemanticMin: 0.2, SemanticHeld: 0.3}
}

func (r Ranking) validate() error {
	for _, c := range []struct {
		field string
		v     any
		bad   bool
	}{
		{"k1", r.K1, r.K1 < 0},
		{"b", r.B, r.B < 0 || r.B > 1},
		{"name_weight", r.NameWeight, r.NameWeight < 0},
		{"param_weight", r.ParamWeight, r.ParamWeight < 0},
		{"vector_weight", r.VectorWeight, r.VectorWeight < 0 || r.VectorWeight > 1},
		{"candidates", r.Candidates, r.Candidates < 1},
		{"vector_pool", r.VectorPool, r.VectorPool < 0},
		{"clause_pool", r.ClausePool, r.ClausePool < 0},
		{"whole_weight", r.WholeWeight, r.WholeWeight < 0},
		{"rrf_k", r.RRFK, r.RRFK < 0},
		{"diversity", r.Diversity, r.Diversity < 0 || r.Diversity > 1},
		{"likelihood_weight", r.LikelihoodWeight, r.LikelihoodWeight < 0 || r.VectorWeight+r.LikelihoodWeight > 1},
		{"mu", r.Mu, r.LikelihoodWeight > 0 && r.Mu <= 0},
		{"semantic_weight", r.SemanticWeight, r.SemanticWeight < 0 || r.VectorWeight+r.LikelihoodWeight+r.SemanticWeight > 1},
		{"semantic_min", r.SemanticMin, r.SemanticMin < 0 || r.SemanticMin >= 1},
		{"semantic_held", r.SemanticHeld, r.SemanticHeld < 0 || r.SemanticHeld > 1},
	} {
		if c.bad {
			return contracts.Errorf(contracts.CodeInvalidConfig, "ranking %s out of range: %v", c.field, c.v).With("field", c.field)
		}
	}
	return nil
}

// SearchOptions narrow and re-rank a search.
type SearchOptions struct {
	K        int              // results wanted; 0 means 5
	Services []string         // keep only these services (empty: all)
	Risk     []contracts.Risk // keep only these risk levels (empty: all)
	// Boost is added to a tool's score (scores are scaled so the best plain
	// hit is 1): the hook for memory of tools that worked for similar steps.
	Boost map[string]float64
	// Avoid drops tools outright (memory's should_avoid).
	Avoid []string
}

// Hit is one recommended tool. Score is the tool's relevance in 0..1, not
// its rank: the IDF-weighted share of the request's words (or of its best
// matching clause's) that the tool's text holds, over the words the index
// knows (see relevance). Hits come in rank order, which also weighs
// phrasing, length and the vector side, so a score may rise down the list.
type Hit struct {
	Tool     string
	Score    float64
	Contract contracts.Contract
}

// Search ranks the indexed tools for query. Bad options return a coded
// error naming the field; an empty index returns no hits.
func (r *Recommender) Search(ctx context.Context, query string, o SearchOptions) ([]Hit, error) {
	if err := validateSearch(query, o); err != nil {
		return nil, err
	}
	k := o.K
	if k == 0 {
		k = 5
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	keep := r.filter(o)
	type key struct {
		text string
		kind listKind
	}
	memo := map[key]ranked{}
	list := func(text string, kind listKind) (ranked, error) {
		if l, ok := memo[key{text, kind}]; ok {
			return l, nil
		}
		if l, ok := memo[key{text, clauseList}]; ok && kind == pieceList {
			return l, nil // a piece is often a whole clause too
		}
		l, err := r.rankList(ctx, text, keep, kind)
		memo[key{text, kind}] = l
		return l, err
	}
	whole, err := list(query, wholeList)
	if err != nil {
		return nil, err
	}
	lists := []ranked{whole}
	texts := []string{query}
	if clauses := tokenize.Clauses(query, r.rank.ClauseMinWords, false); len(clauses) > 1 {
		for _, c := range clauses {
			l, err := list(c, clauseList)
			if err != nil {
				return nil, err
			}
			lists = append(lists, l)
		}
		texts = append(texts, clauses...)
	}
	scores := map[string]float64{}
	best := map[string]float64{}
	for i, l := range lists {
		w := 1.0
		if i == 0 {
			w = r.rank.WholeWeight
		}
		for rank, t := range l.order {
			s := w / (r.rank.RRFK + float64(rank+1))
			if i > 0 && r.rank.ClauseMax {
				best[t] = max(best[t], s)
				continue
			}
			scores[t] += s
		}
	}
	for t, s := range best {
		scores[t] += s
	}
	r.boosted(scores, o.Boost, keep)
	// Diversification looks at finer pieces than fusion: commas and a bare
	// "and" often join two tasks in one sentence, and xQuAD only rewards a
	// piece's tools until one of them is chosen, so over-splitting costs
	// little here while it hurts fusion.
	pieces := tokenize.Clauses(query, r.rank.ClauseMinWords, true)
	var out []Hit
	if r.rank.Diversity == 0 || len(pieces) < 2 || len(lists) < 2 {
		out = r.hits(scores, k)
	} else {
		aspects := make([]ranked, 0, len(pieces))
		for _, p := range pieces {
			l, err := list(p, pieceList)
			if err != nil {
				return nil, err
			}
			aspects = append(aspects, l)
		}
		out = r.diversify(scores, aspects, k)
	}
	r.relevance(out, append(texts, pieces...))
	return out, nil
}

// Coverage is the share of query's words (by letters) that any indexed
// tool's text holds, 0..1: how much of a request the index can see. A
// request in another script than the descriptions' (Korean against
// English tools) scores about 0, so its hits, if any, are noise; the
// planner then gets a chance to search with its own words.
func (r *Recommender) Coverage(query string) float64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.lex.covered(tokenize.NameWords(query))
}

// relevance sets each hit's Score to its best match over texts (the
// request, its clauses and pieces): the IDF-weighted share of the text's
// known words that the tool holds. A text's words the index does not know
// (names, codes, quoted values) count for nobody, so a request full of
// arguments can still score 1 on its tool.
func (r *Recommender) relevance(hits []Hit, texts []string) {
	words := make([][]string, len(texts))
	for i, t := range texts {
		words[i] = tokenize.NameWords(t)
	}
	for i := range hits {
		slot := r.lex.slots[hits[i].Tool]
		best := 0.0
		for _, ws := range words {
			best = max(best, r.lex.share(slot, ws))
		}
		hits[i].Score = math.Round(best*1000) / 1000
	}
}

// ranked is one text's candidate list: tools best first, and each one's
// fused score scaled so the list's best is 1.
type ranked struct {
	order []string
	score map[string]float64
}

// boosted adds each boost, scaled by the best score, to the tools that pass
// the filter, matched or not: memory may know a tool worked for such a
// goal although it shares no word with it.
func (r *Recommender) boosted(scores, boost map[string]float64, keep func(int) bool) {
	best := maxOf(scores)
	for t, b := range boost {
		if slot, ok := r.lex.slots[t]; ok && (keep == nil || keep(slot)) {
			scores[t] += b * best
		}
	}
}

// diversify orders tools for a compound request by explicit query-aspect
// diversification (xQuAD, Santos et al. 2010) with each clause as an aspect:
// the next tool maximises
//
//	(1-λ)·rel(t) + λ·Σ_c w_c·P(t|c)·Π_{s chosen}(1-P(s|c))
//
// so once a clause is served by a chosen tool, its other matches stop
// crowding out the tool another clause needs. rel is the fused score scaled
// to 1, P(t|c) the clause's own score scaled to 1 (its best tool closes the
// clause), w_c = 1/|clauses|. The first pick is the plain best, which keeps
// R@1 of the whole request.
func (r *Recommender) diversify(scores map[string]float64, clauses []ranked, k int) []Hit {
	lambda := r.rank.Diversity
	rel := maxOf(scores)
	open := make([]float64, len(clauses)) // Π(1-P(s|c)) so far
	for i := range open {
		open[i] = 1
	}
	w := lambda / float64(len(clauses))
	out := make([]Hit, 0, k)
	taken := map[string]bool{}
	for len(out) < k && len(taken) < len(scores) {
		bestT, bestG := "", math.Inf(-1)
		for t, s := range scores {
			if taken[t] {
				continue
			}
			g := (1 - lambda) * s / rel
			for i, c := range clauses {
				if len(out) == 0 {
					break // the first tool is the plain best: it serves the whole request
				}
				g += w * c.score[t] * open[i]
			}
			if g > bestG || (g == bestG && t < bestT) {
				bestT, bestG = t, g
			}
		}
		taken[bestT] = true
		for i, c := range clauses {
			open[i] *= 1 - c.score[bestT]
		}
		out = append(out, Hit{Tool: bestT, Contract: r.tools[bestT].contract})
	}
	return out
}

// hits keeps the k best fused scores, best first (ties by name).
func (r *Recommender) hits(scores map[string]float64, k int) []Hit {
	order := slices.Collect(maps.Keys(scores))
	slices.SortFunc(order, func(a, b string) int {
		if c := cmp.Compare(scores[b], scores[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	out := make([]Hit, 0, min(k, len(order)))
	for _, t := range order[:min(k, len(order))] {
		out = append(out, Hit{Tool: t, Contract: r.tools[t].contract})
	}
	return out
}

// Recommend returns the names of the k best tools for query, best first.
func (r *Recommender) Recommend(ctx context.Context, query string, k int) ([]string, error) {
	if k < 0 {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "k must not be negative, got %d", k).With("field", "k")
	}
	hits, err := r.Search(ctx, query, SearchOptions{K: k})
	return Names(hits), err
}

// Names lists the hits' tool names in order: what Recommend answers, for
// callers that ran Search with options.
func Names(hits []Hit) []string {
	if hits == nil {
		return nil
	}
	names := make([]string, len(hits))
	for i, h := range hits {
		names[i] = h.Tool
	}
	return names
}

func validateSearch(query string, o SearchOptions) error {
	if len(tokenize.Split(query)) == 0 {
		return contracts.Errorf(contracts.CodeInvalidInput, "query has no words").With("field", "query")
	}
	if o.K < 0 {
		return contracts.Errorf(contracts.CodeInvalidInput, "k must not be negative, got %d", o.K).With("field", "k")
	}
	for _, risk := range o.Risk {
		switch risk {
		case contracts.RiskRead, contracts.RiskWrite, contracts.RiskDestructive:
		default:
			return contracts.Errorf(contracts.CodeInvalidInput, "unknown risk level %q", risk).With("field", "risk")
		}
	}
	for t, b := range o.Boost {
		if math.IsNaN(b) || math.IsInf(b, 0) {
			return contracts.Errorf(contracts.CodeInvalidInput, "boost for %s is not a number", t).With("field", "boost")
		}
	}
	return nil
}

// filter returns the predicate a tool's slot must pass (services, risk,
// avoid), or nil when every tool passes.
func (r *Recommender) filter(o SearchOptions) func(slot int) bool {
	if len(o.Services) == 0 && len(o.Risk) == 0 && len(o.Avoid) == 0 {
		return nil
	}
	return func(slot int) bool {
		e := r.bySlot[slot]
		if e == nil || slices.Contains(o.Avoid, e.contract.Tool) {
			return false
		}
		if len(o.Services) > 0 && !slices.Contains(o.Services, e.service) {
			return false
		}
		return len(o.Risk) == 0 || slices.Contains(o.Risk, e.contract.RiskLevel)
	}
}

// listKind is what a ranked text is to its request.
type listKind int

const (
	wholeList  listKind = iota // the request itself
	clauseList                 // a clause, for rank fusion
	pieceList                  // a finer piece, an aspect for xQuAD
)

// rankList ranks one text and returns the best Candidates tools in order.
// The whole request fuses BM25, query likelihood, vector similarity and
// the meaning list; a clause gets BM25 and, with ClauseVectors, vector
// similarity over its ClausePool best lexical candidates; a piece BM25.
func (r *Recommender) rankList(ctx context.Context, text string, keep func(int) bool, kind listKind) (ranked, error) {
	whole := kind == wholeList
	words := tokenize.NameWords(text)
	lex := borrow(len(r.lex.names))
	touched := r.lex.score(words, keep, lex)
	defer func() { giveBack(lex, touched) }()
	var maxL float64
	best := -1 // the best lexical slot
	for _, s := range touched {
		if lex[s] > maxL {
			maxL, best = lex[s], s
		}
	}
	// cands are the slots the list is cut from. A clause's list scores
	// vectors over its ClausePool best lexical candidates only, and adds
	// nothing else, so when that pool holds at least Candidates tools the
	// list is cut from the pool: one pass over the touched slots, not two
	// (a common word touches thousands of tools at 50k).
	var cands []int // nil: touched, with what the vector sides add
	var vec map[int]float64
	if whole || kind == clauseList && r.rank.ClauseVectors {
		n := r.rank.VectorPool
		if !whole && r.rank.ClausePool > 0 {
			n = r.rank.ClausePool
		}
		var pool []int // nil: every allowed tool
		if n > 0 {
			pool = topN(touched, lex, r.lex.names, n)
			if !whole && n >= r.rank.Candidates {
				cands = pool
			}
		}
		var err error
		if vec, err = r.vectorScores(ctx, text, pool, keep); err != nil {
			return ranked{}, err
		}
	}
	var maxV float64
	for _, v := range vec {
		maxV = max(maxV, v)
	}
	wv := r.rank.VectorWeight
	if len(vec) == 0 {
		wv = 0
	}
	// Fuse in slot space; vector hits have slots too (every indexed tool
	// is in the lexical index).
	wq := r.rank.LikelihoodWeight
	if !whole {
		// Clause lists feed rank fusion and xQuAD; likelihood there cost
		// Seal-Tools multi-tool Full@5 about 0.01.
		wq = 0
	}
	var sem map[int]float64
	if whole {
		var err error
		if sem, err = r.semanticScores(ctx, text, keep); err != nil {
			return ranked{}, err
		}
	}
	ws := r.rank.SemanticWeight
	if len(sem) == 0 {
		ws = 0
	}
	if ws > 0 {
		// One vector for a request of several tasks is a blend of them:
		// its share shrinks with the number of clauses (Seal-Tools
		// compound requests lost R@1 at the full share).
		if n := len(tokenize.Clauses(text, r.rank.ClauseMinWords, false)); n > 1 {
			ws /= float64(n)
		}
		if best >= 0 {
			h := r.lex.share(best, words)
			ws *= 1 - (1-r.rank.SemanticHeld)*h*h
		}
	}
	for _, s := range touched {
		lex[s] *= (1 - wv - wq - ws) / maxL
	}
	if wq > 0 && len(touched) > 0 {
		for i, q := range r.lex.scaledLikelihood(words, r.rank.Mu, touched) {
			lex[touched[i]] += wq * q
		}
	}
	for s, v := range vec {
		if lex[s] == 0 {
			touched = append(touched, s)
		}
		lex[s] += wv * v / maxV
	}
	for s, v := range sem {
		if lex[s] == 0 {
			touched = append(touched, s)
		}
		lex[s] += ws * v
	}
	if cands == nil {
		cands = touched
	}
	order := topN(cands, lex, r.lex.names, r.rank.Candidates)
	out := ranked{order: make([]string, len(order)), score: make(map[string]float64, len(order))}
	for i, s := range order {
		t := r.lex.names[s]
		out.order[i] = t
		out.score[t] = lex[s] / lex[order[0]]
	}
	return out, nil
}

// topN returns the n best-scored slots, best first (ties by tool name),
// without sorting them all: a bounded min-heap keeps the n best seen so
// far, so a slot that cannot enter costs one comparison.
func topN(slots []int, score []float64, names []string, n int) []int {
	h := &slotHeap{score: score, names: names, s: make([]int, 0, min(n, len(slots)))}
	for _, t := range slots {
		switch {
		case len(h.s) < n:
			heap.Push(h, t)
		case n > 0 && h.better(t, h.s[0]):
			h.s[0] = t
			heap.Fix(h, 0)
		}
	}
	slices.SortFunc(h.s, func(a, b int) int {
		if h.better(a, b) {
			return -1
		}
		return 1
	})
	return h.s
}

// slotHeap is a min-heap of slots, the worst on top.
type slotHeap struct {
	score []float64
	names []string
	s     []int
}

func (h *slotHeap) better(a, b int) bool {
	if h.score[a] != h.score[b] {
		return h.score[a] > h.score[b]
	}
	return h.names[a] < h.names[b]
}

func (h *slotHeap) Len() int           { return len(h.s) }
func (h *slotHeap) Less(i, j int) bool { return h.better(h.s[j], h.s[i]) }
func (h *slotHeap) Swap(i, j int)      { h.s[i], h.s[j] = h.s[j], h.s[i] }
func (h *slotHeap) Push(x any)         { h.s = append(h.s, x.(int)) }
func (h *slotHeap) Pop() any {
	x := h.s[len(h.s)-1]
	h.s = h.s[:len(h.s)-1]
	return x
}

// vectorScores is the cosine similarity of text to the tools of the
// vector pool (the text's best lexical candidates), or to every allowed
// tool when pool is nil. Only positive similarities count.
func (r *Recommender) vectorScores(ctx context.Context, text string, pool []int, keep func(int) bool) (map[int]float64, error) {
	if r.rank.VectorWeight == 0 || len(r.tools) == 0 {
		return nil, nil
	}
	q, err := r.emb.EmbedQuery(ctx, text)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeExternal, "embed query: %w", err).With("embedder", r.emb.Identity())
	}
	if len(q) != r.dim || isZero(q) {
		return nil, nil
	}
	slots := pool
	if pool == nil {
		for s, e := range r.bySlot {
			if e != nil && (keep == nil || keep(s)) {
				slots = append(slots, s)
			}
		}
	}
	sim := borrow(len(r.lex.names))
	var near []int
	for _, s := range slots {
		if v := dot(r.vecs[s], q); v > 0 {
			sim[s] = v
			near = append(near, s)
		}
	}
	defer giveBack(sim, near)
	// As many neighbours as a list keeps: beyond them the vector side
	// would only add noise to the lexical order.
	top := topN(near, sim, r.lex.names, r.rank.Candidates)
	out := make(map[int]float64, len(top))
	for _, s := range top {
		out[s] = sim[s]
	}
	return out, nil
}

// meaningText is what of a request the meaning list embeds: its task
// words outside quotes (see semanticScores).
func meaningText(text string) string { return tokenize.Content(withoutQuoted(text)) }

// semanticScores compares text's meaning with every allowed tool (a scan
// of the int8 semantic vectors) and keeps the Candidates most similar,
// scaled so the best is 1 and the list's last is 0: static-vector cosines
// share a floor that says nothing about the request. Quoted spans of the
// request are left out: they are argument values ("how to say 'Where is
// the restaurant?' in Swedish" is not about restaurants), and so are
// function words and request verbs (tokenize.Content): in a sum of piece
// vectors "could you please help me" outweighs a two-word task.
func (r *Recommender) semanticScores(ctx context.Context, text string, keep func(int) bool) (map[int]float64, error) {
	if r.opts.Semantic == nil || r.rank.SemanticWeight == 0 || len(r.tools) == 0 {
		return nil, nil
	}
	q, err := r.opts.Semantic.EmbedQuery(ctx, meaningText(text))
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeExternal, "semantic query: %w", err).With("embedder", r.opts.Semantic.Identity())
	}
	if len(q) != r.sem.dim || isZero(q) {
		return nil, nil
	}
	// Two passes: the first headDims dimensions (the static vectors' PCA
	// orders them by variance), in integer sums against the query
	// quantised to int8, pick a shortlist from every allowed tool, whose
	// full similarity decides. A full-width scan of every tool was most
	// of a query's time at 50k tools.
	sim := borrow(len(r.lex.names))
	q8, _ := quantise(q)
	coarse := make([]int, 0, len(r.bySlot))
	for s, e := range r.bySlot {
		if e == nil || (keep != nil && !keep(s)) || !r.sem.has(s) {
			continue
		}
		if v := r.sem.headDot(s, q8); v > 0 {
			sim[s] = v
			coarse = append(coarse, s)
		}
	}
	short := topN(coarse, sim, r.lex.names, semanticShortlist*r.rank.Candidates)
	giveBack(sim, coarse)
	sim = borrow(len(r.lex.names))
	var near []int
	for _, s := range short {
		if v := r.sem.dot(s, q); v > r.rank.SemanticMin {
			sim[s] = v
			near = append(near, s)
		}
	}
	defer giveBack(sim, near)
	top := topN(near, sim, r.lex.names, r.rank.Candidates)
	out := make(map[int]float64, len(top))
	if len(top) == 0 {
		return out, nil
	}
	hi, lo := sim[top[0]], sim[top[len(top)-1]]
	for _, s := range top {
		if hi > lo {
			out[s] = (sim[s] - lo) / (hi - lo)
		} else {
			out[s] = 1
		}
	}
	return out, nil
}

// semanticShortlist is how many tools per kept candidate the semantic
// list's first pass hands to the full similarity (recall measured in
// TestScale50k, docs/recommender.md).
const semanticShortlist = 8

func maxOf(m map[string]float64) float64 {
	best := 0.0
	for _, v := range m {
		best = max(best, v)
	}
	if best == 0 {
		return 1
	}
	return best
}

func isZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// withoutQuoted drops quoted spans ("...", '...' after a space, “...”):
// they are argument values, whose meaning is not the task's. A request
// wholly in quotes is kept: the quotes wrap the request itself.
func withoutQuoted(text string) string {
	var b strings.Builder
	var close rune
	prev := ' '
	for _, r := range text {
		switch {
		case close != 0:
			if r == close {
				close = 0
			}
		case r == '"':
			close = '"'
		case r == '“':
			close = '”'
		case r == '\'' && !unicode.IsLetter(prev) && !unicode.IsDigit(prev):
			close = '\''
		default:
			b.WriteRune(r)
		}
		prev = r
	}
	if close != 0 || len(tokenize.Split(b.String())) == 0 {
		return text // unbalanced, or the quotes wrap the whole request
	}
	return b.String()
}
