package webui

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/mcpserver"
	"github.com/ordo-run/ordo/memory/patterns"
)

// Prefix is where the console is mounted on the HTTP listener.
const Prefix = "/ui/"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Engine is the engine the console drives: the one the MCP tools drive
// (with the scopes policy grants each user).
type Engine = mcpserver.Engine

// Templates are a user's saved workflow templates (pattern memory) and
// the way to plan a run from one; nil when memory is off.
type Templates interface {
	Templates(ctx context.Context, user string) ([]patterns.Template, error)
	PlanTemplate(ctx context.Context, req agent.TemplateRequest) (*contracts.Run, error)
}

// Options configure the console. MCP and Engine are required.
type Options struct {
	// MCP is the server on the same listener: its tokens sign people in,
	// its run privacy and event stream serve the run pages.
	MCP       *mcpserver.Server
	Engine    Engine
	Runs      mcpserver.RunLister   // the runs list
	Catalog   mcpserver.Catalog     // the tools page
	Admin     mcpserver.SourceAdmin // admin pages (optional)
	Templates Templates             // saved templates (optional)
	// Config is the running configuration as shown to admins, secrets
	// already hidden (what `ordo config show` prints).
	Config  []byte
	Logger  *slog.Logger
	Version string
	// SessionTTL is how long a sign-in lasts (default 12 h).
	SessionTTL time.Duration
}

// Console serves the pages under Prefix.
type Console struct {
	opts     Options
	log      *slog.Logger
	sessions *sessions
	pages    map[string]*template.Template
	mux      *http.ServeMux
	// origin refuses a browser's post from another origin. Cookies ignore
	// ports and SameSite lets a sibling subdomain through, so a page there
	// could plant the sign-in form's cookie and post a matching form,
	// signing the victim in as the attacker; the CSRF tokens cannot tell.
	origin *http.CrossOriginProtection
}

// New builds the console.
func New(opts Options) (*Console, error) {
	if opts.MCP == nil || opts.Engine == nil {
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "webui: the MCP server and the engine are required").With("field", "webui")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = 12 * time.Hour
	}
	pages, err := parsePages()
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInternal, "webui templates: %w", err)
	}
	c := &Console{opts: opts, log: opts.Logger, sessions: newSessions(opts.SessionTTL), pages: pages, origin: http.NewCrossOriginProtection()}
	c.routes()
	return c, nil
}

func (c *Console) routes() {
	m := http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static")
	m.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", http.FileServerFS(static)))
	m.HandleFunc("GET /ui/signin", c.signInPage)
	m.HandleFunc("POST /ui/signin", c.signIn)
	m.Handle("POST /ui/signout", c.form(c.signOut))
	m.Handle("GET /ui/{$}", c.page(func(w http.ResponseWriter, r *http.Request, _ *session) {
		http.Redirect(w, r, "/ui/runs", http.StatusSeeOther)
	}))
	m.Handle("GET /ui/runs", c.page(c.runsPage))
	m.Handle("GET /ui/runs/new", c.page(c.newRunPage))
	m.Handle("POST /ui/runs", c.form(c.startRun))
	m.Handle("POST /ui/plan/validate", c.form(c.validatePlan))
	m.Handle("GET /ui/runs/{id}", c.page(c.runPage))
	m.Handle("GET /ui/runs/{id}/live", c.page(c.runLive))
	m.Handle("GET /ui/runs/{id}/events", c.page(c.runEvents))
	m.Handle("POST /ui/runs/{id}/decide", c.form(c.decide))
	m.Handle("POST /ui/runs/{id}/fork", c.form(c.fork))
	m.Handle("POST /ui/runs/{id}/steer", c.form(c.steer))
	m.Handle("POST /ui/runs/{id}/retry", c.form(c.retry))
	m.Handle("GET /ui/sessions", c.page(c.conversationsPage))
	m.Handle("GET /ui/session", c.page(c.conversationPage))
	m.Handle("GET /ui/tools", c.page(c.toolsPage))
	m.Handle("GET /ui/admin", c.admin(c.adminPage))
	m.Handle("POST /ui/admin/plugins", c.admin(c.addPlugin))
	m.Handle("POST /ui/admin/plugins/remove", c.admin(c.removePlugin))
	c.mux = m
}

// ServeHTTP serves the console with its security headers on every answer.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if err := c.origin.Check(r); err != nil {
		c.log.Info("console: cross-origin request refused", "method", r.Method, "path", r.URL.Path, "origin", r.Header.Get("Origin"))
		c.fail(w, r, c.sessions.from(r), http.StatusForbidden, contracts.Errorf(contracts.CodeForbidden,
			"this request came from another site (%s), not from this console: open the console's own page and try again", err))
		return
	}
	c.mux.ServeHTTP(w, r)
}

// CSP is the console's Content-Security-Policy: its own script and
// stylesheet only, no inline script or style, nothing framed, forms and
// fetches to itself only.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// page wraps a handler that needs a signed-in person; others are sent to
// sign in (or get 401 for a script's request).
func (c *Console) page(fn func(http.ResponseWriter, *http.Request, *session)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := c.sessions.from(r)
		if s == nil {
			err, twice := contracts.Errorf(contracts.CodeUnauthorized, "sign in first"), planted(r)
			if twice {
				clearSessionCookies(w, r)
				err = contracts.Errorf(contracts.CodeUnauthorized, "this request carried two console sign-ins, one set by another page on this host "+
					"(cookies ignore ports): both are cleared, sign in again")
				c.log.Warn("console: two session cookies on one request (one planted?): signed out", "path", r.URL.Path)
			}
			switch {
			case fetched(r) || r.Header.Get("Accept") == "text/event-stream":
				writeJSONError(w, http.StatusUnauthorized, err)
			case twice && r.Method == http.MethodGet:
				c.showSignIn(w, r, http.StatusUnauthorized, returnTo(r.URL.RequestURI()), err)
			case twice:
				c.showSignIn(w, r, http.StatusUnauthorized, "/ui/runs", err)
			default:
				http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
			}
			return
		}
		fn(w, r.WithContext(mcpserver.WithIdentity(r.Context(), s.id)), s)
	})
}

// form wraps a state-changing handler: a session and its CSRF token (the
// form's csrf field or the X-CSRF-Token header) are required.
func (c *Console) form(fn func(http.ResponseWriter, *http.Request, *session)) http.Handler {
	return c.page(func(w http.ResponseWriter, r *http.Request, s *session) {
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		}
		token := r.Header.Get(csrfHeader)
		if token == "" {
			token = r.PostFormValue(csrfField)
		}
		if !s.csrfOK(token) {
			c.fail(w, r, s, http.StatusForbidden, contracts.Errorf(contracts.CodeForbidden, "the form is stale or not this console's (CSRF token mismatch): reload the page").With("field", csrfField))
			return
		}
		fn(w, r, s)
	})
}

// admin wraps a form or page for admins only.
func (c *Console) admin(fn func(http.ResponseWriter, *http.Request, *session)) http.Handler {
	check := func(w http.ResponseWriter, r *http.Request, s *session) {
		if !s.id.Has(mcpserver.RoleAdmin) {
			c.fail(w, r, s, http.StatusForbidden, contracts.Errorf(contracts.CodeForbidden, "this page needs the %s role", mcpserver.RoleAdmin).With("user", s.id.User))
			return
		}
		if c.opts.Admin == nil {
			c.fail(w, r, s, http.StatusNotFound, contracts.Errorf(contracts.CodeInvalidConfig, "plugin administration is not available on this server"))
			return
		}
		fn(w, r, s)
	}
	get := c.page(check)
	post := c.form(check)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			post.ServeHTTP(w, r)
			return
		}
		get.ServeHTTP(w, r)
	})
}

// maxForm bounds a form or a plan posted to the console.
const maxForm = 4 << 20

// fetched reports a request the console's script made (it wants JSON).
func fetched(r *http.Request) bool { return r.Header.Get(fetchHeader) != "" }

const fetchHeader = "X-Ordo-Fetch"

// fail answers an error: JSON for the script, else the error page.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, s *session, status int, err error) {
	ce := contracts.AsError(err)
	if fetched(r) {
		writeJSONError(w, status, ce)
		return
	}
	w.WriteHeader(status)
	c.render(w, "error", s, map[string]any{"Error": ce})
}

// httpStatus maps a coded error to an HTTP status.
func httpStatus(err error) int {
	ce := contracts.AsError(err)
	switch {
	case ce.Code == contracts.CodeRunNotFound:
		return http.StatusNotFound
	case ce.Code == contracts.CodeForbidden:
		return http.StatusForbidden
	case ce.Code == contracts.CodeInvalidDecision && ce.Details["field"] == "seq":
		return http.StatusConflict // the run moved on since the page was shown
	case ce.Code == contracts.CodeInternal:
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

func writeJSONError(w http.ResponseWriter, status int, e *contracts.Error) {
	writeJSON(w, status, map[string]any{"ok": false, "error": e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// done answers a successful form: the script gets where to go (or
// nothing, to stay and follow the run), a browser without it the page.
func (c *Console) done(w http.ResponseWriter, r *http.Request, to string, stay bool) {
	if fetched(r) {
		out := map[string]any{"ok": true}
		if !stay {
			out["location"] = to
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// view is what every page template gets.
type view struct {
	Title   string
	User    string
	Admin   bool
	CSRF    string
	Version string
	Data    any
}

func (c *Console) render(w http.ResponseWriter, name string, s *session, data any) {
	t := c.pages[name]
	v := view{Version: c.opts.Version, Data: data}
	if s != nil {
		v.User, v.Admin, v.CSRF = s.id.User, s.id.Has(mcpserver.RoleAdmin), s.csrf
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	}
	if err := t.ExecuteTemplate(w, "layout", v); err != nil && !errors.Is(err, context.Canceled) {
		c.log.Warn("console page", "page", name, "err", err)
	}
}

// renderFragment executes one named template (no layout): the live part
// of the run page the script swaps in.
func (c *Console) renderFragment(w http.ResponseWriter, page, name string, s *session, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	v := view{Version: c.opts.Version, Data: data, User: s.id.User, Admin: s.id.Has(mcpserver.RoleAdmin), CSRF: s.csrf}
	if err := c.pages[page].ExecuteTemplate(w, name, v); err != nil {
		c.log.Warn("console fragment", "page", page, "err", err)
	}
}

// pageNames are the page templates; each is parsed with layout.html.
var pageNames = []string{"signin", "runs", "newrun", "run", "sessions", "session", "tools", "admin", "error"}

func parsePages() (map[string]*template.Template, error) {
	base, err := template.New("layout").Funcs(funcs).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := base.Clone()
		if err != nil {
			return nil, err
		}
		if out[name], err = t.ParseFS(templateFS, "templates/"+name+".html"); err != nil {
			return nil, err
		}
	}
	return out, nil
}
