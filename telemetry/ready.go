package telemetry

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/memory"
)

// Check is one readiness condition. It carries no error text: /readyz
// answers without a token, and an error may name paths or addresses.
type Check struct {
	Name  string `json:"name"` // store, plugin NAME, upstream NAME
	OK    bool   `json:"ok"`
	State string `json:"state,omitempty"`
}

// Readiness is the body of /readyz.
type Readiness struct {
	Ready  bool    `json:"ready"`
	Checks []Check `json:"checks"`
}

// Ready checks that this server can take work: the store answers a
// query, every plugin declared in configuration (the bundled ones among
// them) is running, and every configured upstream MCP server has listed
// its tools at least once (a later disconnect is ordo_upstream_up's
// business, not a reason to take the server out of rotation). Plugins
// dropped into plugins_dir or added by an admin do not hold it back.
func Ready(ctx context.Context, store memory.Checkpointer, src Sources) Readiness {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	r := Readiness{Ready: true}
	add := func(c Check) {
		r.Ready = r.Ready && c.OK
		r.Checks = append(r.Checks, c)
	}
	_, err := store.List(ctx, memory.Filter{Limit: 1})
	add(Check{Name: "store", OK: err == nil})
	for _, p := range src.Sources() {
		if p.Kind != "plugin" || p.Origin != "config" {
			continue
		}
		add(Check{Name: "plugin " + p.Name, OK: p.State == host.StateRunning, State: p.State})
	}
	for _, u := range src.Upstreams() {
		if u.Origin != "config" {
			continue
		}
		add(Check{Name: "upstream " + u.Name, OK: u.ToolsHash != "", State: u.State})
	}
	return r
}

// ReadyHandler serves Ready as JSON: 200 when ready, 503 when not.
func ReadyHandler(store memory.Checkpointer, src Sources) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res := Ready(r.Context(), store, src)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if !res.Ready {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(res)
	})
}
