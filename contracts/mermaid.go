package contracts

import (
	"fmt"
	"slices"
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
	node := make(map[string]string, len(p.Actions))
	byID := make(map[string]Action, len(p.Actions))
	for i, a := range p.Actions {
		node[a.ID] = fmt.Sprintf("n%d", i)
		byID[a.ID] = a
		fmt.Fprintf(&sb, "    %s[\"%s\"]\n", node[a.ID], mermaidText(a.ID+": "+a.Tool))
	}
	for _, a := range p.Actions {
		for _, d := range g.Deps[a.ID] {
			var keys []string
			for _, k := range a.Requires {
				if slices.Contains(byID[d].Produces, k) {
					keys = append(keys, k)
				}
			}
			if len(keys) == 0 {
				fmt.Fprintf(&sb, "    %s --> %s\n", node[d], node[a.ID])
				continue
			}
			fmt.Fprintf(&sb, "    %s -->|\"%s\"| %s\n", node[d], mermaidText(strings.Join(keys, ", ")), node[a.ID])
		}
	}
	return sb.String()
}

// mermaidText escapes text for a quoted Mermaid label with entity codes.
var mermaidText = strings.NewReplacer(
	"#", "#35;", `"`, "#quot;", "<", "#lt;", ">", "#gt;", "|", "#124;", "\n", " ", "\r", " ",
).Replace
