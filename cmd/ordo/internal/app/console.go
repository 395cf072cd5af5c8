package app

import (
	"context"
	"net/http"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/mcpserver"
	"github.com/ordo-run/ordo/memory/patterns"
	"github.com/ordo-run/ordo/webui"
)

// HTTPHandler is what `ordo serve --http` serves: srv's handler (/mcp,
// the event streams, /healthz and the ops handlers) and the web console
// at /ui, on one listener. config is the running configuration as the
// console shows it to admins, secrets already hidden.
func (a *App) HTTPHandler(srv *mcpserver.Server, config []byte, version string) (http.Handler, error) {
	eng := scoped{a.Engine, a.Config.Policy}
	opts := webui.Options{MCP: srv, Engine: eng, Runs: a.Store, Catalog: a.Host, Admin: a.Host,
		Config: config, Logger: a.Log.With("component", "console"), Version: version}
	if a.Patterns != nil {
		opts.Templates = templates{eng, a.Patterns}
	}
	ui, err := webui.New(opts)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/", srv.Handler())
	mux.Handle(webui.Prefix, ui)
	mux.Handle("GET /ui", http.RedirectHandler(webui.Prefix, http.StatusSeeOther))
	return mux, nil
}

// templates are the user's saved templates for the console, planned with
// the scopes policy grants the user, as scoped plans every run.
type templates struct {
	scoped
	mem *patterns.Memory
}

func (t templates) Templates(ctx context.Context, user string) ([]patterns.Template, error) {
	return t.mem.Templates(ctx, user)
}

func (t templates) PlanTemplate(ctx context.Context, req agent.TemplateRequest) (*contracts.Run, error) {
	req.Options.Scopes = t.policy.ScopesFor(req.UserID)
	return t.Engine.PlanTemplate(ctx, req)
}
