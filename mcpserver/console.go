package mcpserver

import (
	"context"
	"net/http"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
)

// What the web console (package webui) borrows from the server, so that
// its sign-in, run privacy, event stream and admin arguments are the MCP
// transport's own and cannot drift from them.

// Identify returns the identity a bearer token stands for, checked as the
// HTTP transport checks it (constant time, the same token table).
func (s *Server) Identify(token string) (Identity, bool) { return s.tokens.lookup(token) }

// WithIdentity returns a context whose calls into the server act as id.
func WithIdentity(ctx context.Context, id Identity) context.Context { return withIdentity(ctx, id) }

// LoadRun returns a run the identity in ctx may see (WithIdentity): their
// own, or any for admins; another user's run is CodeRunNotFound.
func (s *Server) LoadRun(ctx context.Context, runID string) (*contracts.Run, error) {
	return s.loadRun(ctx, runID)
}

// ServeRunEvents streams run r.PathValue("id")'s events to id exactly as
// GET /runs/{id}/events does (see serveEvents), for a caller that
// authenticated another way (the console's session cookie).
func (s *Server) ServeRunEvents(w http.ResponseWriter, r *http.Request, id Identity) {
	s.serveEvents(w, r.WithContext(withIdentity(r.Context(), id)))
}

// UpstreamForm is an upstream MCP server as the console's form names it:
// the add_upstream arguments a form holds.
type UpstreamForm struct {
	Name, CommandLine, URL, BearerTokenEnv, URLSecretEnv string
}

// UpstreamSpec checks an upstream MCP server named the way add_upstream
// names one (a command line, or a URL with the variables holding its
// bearer token and URL secret) and returns the host's spec; errors are
// add_upstream's.
func (s *Server) UpstreamSpec(f UpstreamForm) (host.UpstreamSpec, error) {
	return addUpstreamArgs{Name: f.Name, MCP: f.CommandLine, MCPURL: f.URL, BearerTokenEnv: f.BearerTokenEnv,
		URLSecretEnv: f.URLSecretEnv}.spec(s.opts.LookupEnv)
}
