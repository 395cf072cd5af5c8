package agent

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory/patterns"
	"github.com/ordo-run/ordo/recommender"
)

// ToolQuery asks which tools a plan for Goal may use.
type ToolQuery struct {
	Goal     string
	K        int              // how many; 0 means Config.CandidatesK
	Services []string         // only these services' tools (all when empty)
	Risk     []contracts.Risk // only these risk levels (all when empty)
	// Advice is memory's boosts and tools to avoid for this user and goal.
	Advice patterns.ToolAdvice
	// Whole gives a catalog within Config.AllToolsMax whole, in catalog
	// order: no ranking can then lose the right tool, whatever the goal's
	// language.
	Whole bool
	// TopUp fills up to K with the tools that share most words with the
	// goal: a weak query may match two tools, and a planner should still
	// have K to choose from. Without it a failing recommender is an error.
	TopUp bool
}

// Candidate is a tool chosen for a query; Score is the recommender's (0..1)
// when it ranked the tool, else 0.
type Candidate struct {
	Tool  *contracts.Tool
	Score float64
}

// ToolCandidates is the one place tools are chosen for a plan: Ordo's
// planner and re-planner, MCP search_tools and the write_plan prompt all
// ask it. A tool whose source is down is never offered (a plan using it
// would be refused), and the recommender is asked for as many more.
func (e *Engine) ToolCandidates(ctx context.Context, q ToolQuery) ([]Candidate, error) {
	cands, _, err := e.choose(ctx, e.toolPool(q), q)
	return cands, err
}

// toolPool is what candidates are chosen from: the query's services and
// risks, sources up, memory's avoided tools out.
type toolPool struct {
	all  []*contracts.Tool
	down map[string]bool
}

func (e *Engine) toolPool(q ToolQuery) toolPool {
	down := e.unavailable()
	all := slices.DeleteFunc(slices.Clone(e.deps.Tools.List()), func(t *contracts.Tool) bool {
		c := t.Contract
		return down[c.Tool] ||
			len(q.Services) > 0 && !slices.Contains(q.Services, c.Service) ||
			len(q.Risk) > 0 && !slices.Contains(q.Risk, c.RiskLevel)
	})
	return toolPool{all: withoutAvoided(all, q.Advice.Avoid), down: down}
}

func (e *Engine) candidatesK(q ToolQuery) int { return cmp.Or(q.K, e.cfg.CandidatesK) }

// choose returns the whole pool when q.Whole and it is within AllToolsMax
// (or K), else the K best for the goal; ranked says which.
func (e *Engine) choose(ctx context.Context, p toolPool, q ToolQuery) (_ []Candidate, ranked bool, _ error) {
	if q.Whole {
		bound := cmp.Or(e.cfg.AllToolsMax, AllToolsBound)
		if len(p.all) <= max(e.candidatesK(q), bound) {
			out := make([]Candidate, len(p.all))
			for i, t := range p.all {
				out[i] = Candidate{Tool: t}
			}
			return out, false, nil
		}
	}
	cands, err := e.topK(ctx, p, q, q.Goal)
	return cands, true, err
}

// topK is the recommender's K best usable tools for query (memory's advice
// boosts and drops tools), topped up to K in lexical order when q.TopUp.
func (e *Engine) topK(ctx context.Context, p toolPool, q ToolQuery, query string) ([]Candidate, error) {
	k := e.candidatesK(q)
	out := make([]Candidate, 0, k)
	has := func(t *contracts.Tool) bool {
		return slices.ContainsFunc(out, func(c Candidate) bool { return c.Tool == t })
	}
	if e.deps.Recommender != nil {
		hits, err := e.deps.Recommender.Search(ctx, query, recommender.SearchOptions{K: k + len(p.down),
			Services: q.Services, Risk: q.Risk, Boost: q.Advice.Boost, Avoid: q.Advice.Avoid})
		if err != nil && !q.TopUp {
			return nil, err
		}
		if err != nil {
			e.log.Warn("recommender failed; ranking tools lexically", "err", err)
		}
		for _, h := range hits {
			t, ok := e.deps.Tools.Lookup(h.Tool)
			if ok && !p.down[h.Tool] && !slices.Contains(q.Advice.Avoid, h.Tool) && len(out) < k && !has(t) {
				out = append(out, Candidate{Tool: t, Score: h.Score})
			}
		}
	}
	if q.TopUp {
		for _, t := range lexicalTop(query, p.all, min(len(p.all), 2*k)) {
			if len(out) < k && !has(t) {
				out = append(out, Candidate{Tool: t})
			}
		}
	}
	return out, nil
}

// searched are the candidates for the planner's search phrases: each
// phrase's best tool in turn, then each one's second, and so on, K in all.
func (e *Engine) searched(ctx context.Context, p toolPool, q ToolQuery, phrases []string) []Candidate {
	lists := make([][]Candidate, len(phrases))
	for i, ph := range phrases {
		lists[i], _ = e.topK(ctx, p, q, ph) // TopUp: never an error
	}
	k := e.candidatesK(q)
	out := make([]Candidate, 0, k)
	for rank := 0; rank < k && len(out) < k; rank++ {
		for _, l := range lists {
			if rank < len(l) && len(out) < k && !slices.ContainsFunc(out, func(c Candidate) bool { return c.Tool == l[rank].Tool }) {
				out = append(out, l[rank])
			}
		}
	}
	return out
}

// planQuery is the query of Ordo's own planner and re-planner for run.
func (e *Engine) planQuery(ctx context.Context, run *contracts.Run) ToolQuery {
	return ToolQuery{Goal: run.Goal, Advice: e.advice(ctx, run), Whole: true, TopUp: true}
}

// lexicalTop ranks tools by how many of the goal's words their name and
// description contain; ties keep name order.
func lexicalTop(goal string, all []*contracts.Tool, k int) []*contracts.Tool {
	words := strings.FieldsFunc(strings.ToLower(goal), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
	})
	score := func(t *contracts.Tool) int {
		text := strings.ToLower(t.Name() + " " + t.Contract.Description)
		n := 0
		for _, w := range words {
			if len(w) > 2 && strings.Contains(text, w) {
				n++
			}
		}
		return n
	}
	ranked := slices.Clone(all)
	slices.SortStableFunc(ranked, func(a, b *contracts.Tool) int {
		if c := cmp.Compare(score(b), score(a)); c != 0 {
			return c
		}
		return strings.Compare(a.Name(), b.Name())
	})
	return ranked[:k]
}

// toolsOf are the candidates' tools.
func toolsOf(cands []Candidate) []*contracts.Tool {
	out := make([]*contracts.Tool, len(cands))
	for i, c := range cands {
		out[i] = c.Tool
	}
	return out
}
