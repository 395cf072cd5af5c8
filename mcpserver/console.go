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

// UpstreamSpec checks an upstream MCP server named the way add_upstream
// names one (a command line, or a URL with the variable holding its bearer
// token) and returns the host's spec; errors are add_upstream's.
func (s *Server) UpstreamSpec(name, commandLine, url, bearerTokenEnv string) (host.UpstreamSpec, error) {
	return addUpstreamArgs{Name: name, MCP: commandLine, MCPURL: url, BearerTokenEnv: bearerTokenEnv}.spec(s.opts.LookupEnv)
}
