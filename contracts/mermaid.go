package contracts

import (
	"slices"
	"strconv"
	"strings"
)

// Mermaid renders the graph as a Mermaid flowchart for plan
// approval: one node per action labelled "id: tool", an edge per
// dependency labelled with the state keys that flow along it. Node names
// are positional (n0, n1, ...) so ids such as "end" cannot break the chart.
func (g *Graph) Mermaid(p *Plan) string {
	var sb strings.Builder
	sb.WriteString("flowchart TD\n")
	if p == nil {
		return sb.String()
	}
	sb.Grow(64 * len(p.Actions))
	node := make(map[string]int, len(p.Actions))
	for i, a := range p.Actions {
		node[a.ID] = i
		sb.WriteString("    ")
		writeNode(&sb, i)
		sb.WriteString(`["`)
		sb.WriteString(mermaidText(a.ID)) // escaping is per character: parts escape alone
		sb.WriteString(": ")
		sb.WriteString(mermaidText(a.Tool))
		sb.WriteString("\"]\n")
	}
	for _, a := range p.Actions {
		for _, d := range g.Deps[a.ID] {
			sb.WriteString("    ")
			writeNode(&sb, node[d])
			sb.WriteString(" -->")
			keys := 0 // the keys that flow along the edge
			for _, k := range a.Requires {
				if slices.Contains(p.Actions[node[d]].Produces, k) {
					if keys == 0 {
						sb.WriteString(`|"`)
					} else {
						sb.WriteString(", ")
					}
					sb.WriteString(mermaidText(k))
					keys++
				}
			}
			if keys > 0 {
				sb.WriteString(`"|`)
			}
			sb.WriteByte(' ')
			writeNode(&sb, node[a.ID])
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

// writeNode writes the positional name of action i.
func writeNode(sb *strings.Builder, i int) {
	sb.WriteByte('n')
	sb.WriteString(strconv.Itoa(i))
}

// mermaidText escapes text for a quoted Mermaid label with entity codes.
var mermaidText = strings.NewReplacer(
	"#", "#35;", `"`, "#quot;", "<", "#lt;", ">", "#gt;", "|", "#124;", "\n", " ", "\r", " ",
).Replace
