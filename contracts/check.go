package contracts

import (
	"slices"
	"strings"
)

// DefaultMaxActions bounds a plan when neither the caller nor the plan says.
const DefaultMaxActions = 12

// MaxPlanActions is the most a plan's own constraints.max_actions can
// allow: the plan is the model's (or a caller's) text, and a bound it sets
// for itself bounds nothing, so a larger value counts as this one.
const MaxPlanActions = 256

// CheckOptions are the caller's side of the semantic checks.
type CheckOptions struct {
	InitialState []string // keys already in state (count as produced)
	// AllowedServices are services or tool-name prefixes; empty allows all.
	// The plan's constraints.allowed_services apply as well.
	AllowedServices []string
	MaxActions      int // 0 = the plan's constraints.max_actions (at most MaxPlanActions), else DefaultMaxActions
}

// Graph is a checked plan's DAG.
type Graph struct {
	Levels [][]string          // topological levels; ids in one level may run in parallel
	Deps   map[string][]string // action id -> ids it waits for, in plan order
}

// CheckPlan runs the semantic checks that the schema cannot express and
// returns the dependency graph. Each failure is a coded error with the
// offending action in Details["action"]; checks run action by action in
// plan order, so the first broken action is the one reported.
func CheckPlan(p *Plan, cat Catalog, opts CheckOptions) (*Graph, error) {
	if p == nil {
		return nil, Errorf(CodeInvalidInput, "no plan").With("field", "plan")
	}
	if limit := maxActions(p, opts); len(p.Actions) > limit {
		id := p.Actions[limit].ID
		return nil, Errorf(CodeTooManyActions, "plan has %d actions, at most %d allowed", len(p.Actions), limit).
			With("action", id).With("count", len(p.Actions)).With("max", limit)
	}
	index := make(map[string]int, len(p.Actions))
	producers := map[string][]string{}
	for i, a := range p.Actions {
		if _, dup := index[a.ID]; dup {
			return nil, actionError(CodeDuplicateAction, a, "id %q is used twice", a.ID)
		}
		index[a.ID] = i
		for _, key := range a.Produces {
			producers[key] = append(producers[key], a.ID)
		}
	}
	var planAllowed []string
	if p.Constraints != nil {
		planAllowed = p.Constraints.AllowedServices
	}
	initial := make(map[string]bool, len(opts.InitialState))
	for _, k := range opts.InitialState {
		initial[k] = true
	}
	g := &Graph{Deps: make(map[string][]string, len(p.Actions))}
	var buf []int
	for _, a := range p.Actions {
		t, ok := lookup(cat, a.Tool)
		if !ok {
			return nil, actionError(CodeUnknownTool, a, "tool %q is not in the catalog", a.Tool)
		}
		for _, allowed := range [][]string{opts.AllowedServices, planAllowed} {
			if len(allowed) > 0 && !serviceAllowed(t, allowed) {
				return nil, actionError(CodeServiceNotAllowed, a, "tool %q is outside the allowed services %v", a.Tool, allowed).
					With("allowed", allowed)
			}
		}
		for _, key := range a.Produces {
			if !t.CanProduce(key) {
				return nil, actionError(CodeUnproducibleKey, a, "tool %q cannot produce %q (its produces_map lacks it)", a.Tool, key).
					With("key", key)
			}
		}
		deps := buf[:0] // plan indexes of the actions a waits for
		for _, d := range a.DependsOn {
			i, ok := index[d]
			if !ok {
				return nil, actionError(CodeUnknownDependency, a, "depends_on names unknown action %q", d).With("dependency", d)
			}
			deps = append(deps, i)
		}
		for _, key := range a.Requires {
			produced := false
			for _, id := range producers[key] {
				if id != a.ID {
					deps, produced = append(deps, index[id]), true
				}
			}
			if !produced && !initial[key] {
				return nil, actionError(CodeUnsatisfiedRequires, a, "requires %q, which no other action produces and the state lacks", key).
					With("key", key)
			}
		}
		slices.Sort(deps)
		deps = slices.Compact(deps)
		ids := make([]string, len(deps))
		for j, i := range deps {
			ids[j] = p.Actions[i].ID
		}
		g.Deps[a.ID], buf = ids, deps
	}
	if cycle := findCycle(p, g.Deps); cycle != nil {
		return nil, Errorf(CodeCycle, "dependency cycle %s", strings.Join(cycle, " -> ")).
			With("action", cycle[0]).With("cycle", cycle)
	}
	g.Levels = levels(p, g.Deps)
	return g, nil
}

func actionError(code Code, a Action, format string, args ...any) *Error {
	return Errorf(code, "action %s: "+format, append([]any{a.ID}, args...)...).With("action", a.ID).With("tool", a.Tool)
}

func lookup(cat Catalog, name string) (*Tool, bool) {
	if cat == nil {
		return nil, false
	}
	t, ok := cat.Lookup(name)
	return t, ok && t != nil
}

func maxActions(p *Plan, opts CheckOptions) int {
	switch {
	case opts.MaxActions > 0:
		return opts.MaxActions
	case p.Constraints != nil && p.Constraints.MaxActions > 0:
		return min(p.Constraints.MaxActions, MaxPlanActions)
	}
	return DefaultMaxActions
}

// serviceAllowed matches a tool against an allow-list whose entries are a
// service ("notion"), a tool name, a dotted prefix ("google.sheets"
// allows "google.sheets.get_range"), or a prefix ending in "*".
func serviceAllowed(t *Tool, allowed []string) bool {
	name := t.Name()
	for _, e := range allowed {
		switch {
		case e == t.Contract.Service, e == name, strings.HasPrefix(name, e+"."):
			return true
		case strings.HasSuffix(e, "*") && strings.HasPrefix(name, strings.TrimSuffix(e, "*")):
			return true
		}
	}
	return false
}

// findCycle returns a cycle as a path that starts and ends at the same id,
// each id waiting for the next, or nil. It walks actions in plan order so
// the same plan always reports the same cycle.
func findCycle(p *Plan, deps map[string][]string) []string {
	const (
		unseen = iota
		onPath
		done
	)
	state := make(map[string]int, len(deps))
	var path []string
	var visit func(id string) []string
	visit = func(id string) []string {
		state[id] = onPath
		path = append(path, id)
		for _, d := range deps[id] {
			switch state[d] {
			case onPath:
				start := slices.Index(path, d)
				return append(slices.Clone(path[start:]), d)
			case unseen:
				if c := visit(d); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[id] = done
		return nil
	}
	for _, a := range p.Actions {
		if state[a.ID] == unseen {
			if c := visit(a.ID); c != nil {
				return c
			}
		}
	}
	return nil
}

// levels places each action one level after its latest dependency; within
// a level, ids keep plan order. deps must be acyclic.
func levels(p *Plan, deps map[string][]string) [][]string {
	level := make(map[string]int, len(p.Actions))
	var depth func(id string) int
	depth = func(id string) int {
		if l, ok := level[id]; ok {
			return l
		}
		l := 0
		for _, d := range deps[id] {
			l = max(l, depth(d)+1)
		}
		level[id] = l
		return l
	}
	var out [][]string
	for _, a := range p.Actions {
		l := depth(a.ID)
		for len(out) <= l {
			out = append(out, nil)
		}
		out[l] = append(out[l], a.ID)
	}
	return out
}
