package webui

import (
	"cmp"
	"net/http"
	"slices"
	"strings"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/mcpserver"
)

type toolView struct {
	Contract  contracts.Contract
	Available bool
	Score     float64 // search hits only
}

type toolsData struct {
	Query string
	Hits  []toolView
	Tools []toolView
}

// toolsPage lists the catalog with each tool's risk, availability and
// contract, and the best usable tools for a query (chosen as for a plan).
func (c *Console) toolsPage(w http.ResponseWriter, r *http.Request, s *session) {
	d := toolsData{Query: strings.TrimSpace(r.URL.Query().Get("q"))}
	down := map[string]bool{}
	if av, ok := c.opts.Catalog.(mcpserver.Availability); ok {
		for _, n := range av.Unavailable() {
			down[n] = true
		}
	}
	if c.opts.Catalog != nil {
		for _, t := range c.opts.Catalog.List() {
			d.Tools = append(d.Tools, toolView{Contract: t.Contract, Available: !down[t.Contract.Tool]})
		}
		slices.SortFunc(d.Tools, func(a, b toolView) int { return cmp.Compare(a.Contract.Tool, b.Contract.Tool) })
	}
	if d.Query != "" {
		cands, err := c.opts.Engine.ToolCandidates(r.Context(), agent.ToolQuery{Goal: d.Query, K: 10})
		if err != nil {
			c.fail(w, r, s, httpStatus(err), err)
			return
		}
		for _, h := range cands {
			d.Hits = append(d.Hits, toolView{Contract: h.Tool.Contract, Available: true, Score: h.Score})
		}
	}
	c.render(w, "tools", s, d)
}
