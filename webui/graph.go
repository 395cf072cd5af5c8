package webui

import (
	"github.com/ordo-run/ordo/contracts"
)

// The plan's DAG as inline SVG: one column per topological level (the
// plan revision's Levels: actions that may run together), one row per
// action in its level, an edge from each action to those that wait for
// it, each node classed by its step's status for the stylesheet to colour.

const (
	nodeW, nodeH = 170, 34
	colGap       = 50
	rowGap       = 14
	pad          = 8
	labelMax     = 24
)

type graphView struct {
	Width, Height int
	Nodes         []nodeView
	Edges         []edgeView
}

type nodeView struct {
	ID, Tool, Label, Status string
	X, Y, TX, TY            int
}

type edgeView struct{ X1, Y1, X2, Y2 int }

func layout(rev *contracts.PlanRevision, run *contracts.Run) graphView {
	p := &rev.Plan
	levels := rev.Levels
	if len(levels) == 0 {
		levels = topoLevels(p)
	}
	status := actionStatus(rev.Version, run)
	tool := map[string]string{}
	for _, a := range p.Actions {
		tool[a.ID] = a.Tool
	}
	var g graphView
	pos := map[string]nodeView{}
	rows := 0
	for col, ids := range levels {
		for row, id := range ids {
			n := nodeView{ID: id, Tool: tool[id], Status: status[id],
				X: pad + col*(nodeW+colGap), Y: pad + row*(nodeH+rowGap)}
			n.TX, n.TY = n.X+8, n.Y+nodeH/2+4
			n.Label = cut(id+": "+tool[id], labelMax)
			pos[id] = n
			g.Nodes = append(g.Nodes, n)
		}
		rows = max(rows, len(ids))
	}
	waits := deps(p)
	for _, a := range p.Actions {
		to, ok := pos[a.ID]
		if !ok {
			continue
		}
		for _, from := range waits[a.ID] {
			if f, ok := pos[from]; ok {
				g.Edges = append(g.Edges, edgeView{f.X + nodeW, f.Y + nodeH/2, to.X, to.Y + nodeH/2})
			}
		}
	}
	g.Width = 2*pad + len(levels)*(nodeW+colGap) - colGap
	g.Height = 2*pad + rows*(nodeH+rowGap) - rowGap
	return g
}

// deps maps each action to the actions it waits for: the producers of
// the keys it requires, and its depends_on.
func deps(p *contracts.Plan) map[string][]string {
	producer := map[string]string{}
	for _, a := range p.Actions {
		for _, k := range a.Produces {
			producer[k] = a.ID
		}
	}
	out := map[string][]string{}
	for _, a := range p.Actions {
		seen := map[string]bool{}
		add := func(id string) {
			if id != "" && id != a.ID && !seen[id] {
				seen[id] = true
				out[a.ID] = append(out[a.ID], id)
			}
		}
		for _, k := range a.Requires {
			add(producer[k])
		}
		for _, id := range a.DependsOn {
			add(id)
		}
	}
	return out
}

// topoLevels places each action one level after the deepest action it
// waits for (for revisions stored without levels).
func topoLevels(p *contracts.Plan) [][]string {
	d := deps(p)
	level := map[string]int{}
	var depth func(id string, seen map[string]bool) int
	depth = func(id string, seen map[string]bool) int {
		if l, ok := level[id]; ok {
			return l
		}
		if seen[id] { // a cycle the checks would refuse: flatten it
			return 0
		}
		seen[id] = true
		l := 0
		for _, dep := range d[id] {
			l = max(l, depth(dep, seen)+1)
		}
		level[id] = l
		return l
	}
	var out [][]string
	for _, a := range p.Actions {
		l := depth(a.ID, map[string]bool{})
		for len(out) <= l {
			out = append(out, nil)
		}
		out[l] = append(out[l], a.ID)
	}
	return out
}

// actionStatus is each action's state in plan version v: its latest
// step's status (started: running), waiting when the interrupt is about
// it, denied by policy, else pending.
func actionStatus(v int, run *contracts.Run) map[string]string {
	out := map[string]string{}
	for id, d := range run.Policy {
		if d.Decision == contracts.PolicyDeny {
			out[id] = "denied"
		}
	}
	for _, s := range run.Steps {
		if s.PlanVersion == v {
			out[s.ActionID] = string(s.Status)
			if s.Status == contracts.StepStarted {
				out[s.ActionID] = "running"
			}
		}
	}
	if in := run.Interrupt; in != nil && in.ActionID != "" {
		out[in.ActionID] = "waiting"
	}
	if n := len(run.Plans); n > 0 {
		for _, a := range run.Plans[n-1].Plan.Actions {
			if out[a.ID] == "" {
				out[a.ID] = "pending"
			}
		}
	}
	return out
}

func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
