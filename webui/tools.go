package webui

import (
	"cmp"
	"net/http"
	"slices"
	"strings"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/mcpserver"
	"github.com/ordo-run/ordo/recommender"
)

type toolView struct {
	Contract  contracts.Contract
	Available bool
	Score     float64 // search hits only
}

type toolsData struct {
	Query  string
	Hits   []toolView
	Tools  []toolView
	Search bool // a searcher is configured
}

// toolsPage lists the catalog with each tool's risk, availability and
// contract, and the recommender's best tools for a query.
func (c *Console) toolsPage(w http.ResponseWriter, r *http.Request, s *session) {
	d := toolsData{Query: strings.TrimSpace(r.URL.Query().Get("q")), Search: c.opts.Searcher != nil}
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
	if d.Query != "" && c.opts.Searcher != nil {
		hits, err := c.opts.Searcher.Search(r.Context(), d.Query, recommender.SearchOptions{K: 10})
		if err != nil {
			c.fail(w, r, s, httpStatus(err), err)
			return
		}
		for _, h := range hits {
			d.Hits = append(d.Hits, toolView{Contract: h.Contract, Available: !down[h.Tool], Score: h.Score})
		}
	}
	c.render(w, "tools", s, d)
}
