package webui

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/mcpserver"
)

type adminData struct {
	Plugins []host.SourceInfo
	Config  string
	Error   *contracts.Error
	Done    string
}

// adminPage lists plugins and upstreams with their state, the forms to
// add and remove them, and the running configuration, secrets hidden.
func (c *Console) adminPage(w http.ResponseWriter, r *http.Request, s *session) {
	done := r.URL.Query().Get("done")
	if !doneNotice.MatchString(done) {
		done = ""
	}
	c.showAdmin(w, r, s, http.StatusOK, nil, done)
}

// doneNotice is the notice the console's own add and remove link to
// (?done=): anything else in the link is not shown, so a link cannot
// dress up a message of its own as the console's.
var doneNotice = regexp.MustCompile(`^(added|removed) [A-Za-z0-9._-]{1,64}$`)

func (c *Console) showAdmin(w http.ResponseWriter, r *http.Request, s *session, status int, err error, done string) {
	if err != nil && fetched(r) {
		writeJSONError(w, status, contracts.AsError(err))
		return
	}
	d := adminData{Plugins: c.opts.Admin.Sources(), Config: string(c.opts.Config), Done: done}
	if err != nil {
		d.Error = contracts.AsError(err)
	}
	w.WriteHeader(status)
	c.render(w, "admin", s, d)
}

// addPlugin adds a plugin binary (path and checksum) or an upstream MCP
// server (a command line, or a URL and the variables holding its token
// and the key its URL carries),
// checked as add_plugin and add_upstream check them.
func (c *Console) addPlugin(w http.ResponseWriter, r *http.Request, s *session) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	var err error
	switch r.PostFormValue("kind") {
	case "upstream":
		var spec host.UpstreamSpec
		field := func(key string) string { return strings.TrimSpace(r.PostFormValue(key)) }
		spec, err = c.opts.MCP.UpstreamSpec(mcpserver.UpstreamForm{Name: name, CommandLine: field("mcp"), URL: field("mcp_url"),
			BearerTokenEnv: field("bearer_token_env"), URLSecretEnv: field("url_secret_env")})
		if err == nil {
			err = c.opts.Admin.AddUpstream(r.Context(), spec)
		}
	default:
		err = c.opts.Admin.AddPlugin(r.Context(), host.PluginSpec{Name: name, Path: strings.TrimSpace(r.PostFormValue("path")),
			SHA256: strings.TrimSpace(r.PostFormValue("sha256"))})
	}
	if err != nil {
		c.showAdmin(w, r, s, httpStatus(err), err, "")
		return
	}
	c.log.Info("plugin added in the console", "plugin", name, "user", s.id.User)
	c.done(w, r, "/ui/admin?done="+url.QueryEscape("added "+name), false)
}

func (c *Console) removePlugin(w http.ResponseWriter, r *http.Request, s *session) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	if err := c.opts.Admin.RemoveSource(r.Context(), name); err != nil {
		c.showAdmin(w, r, s, httpStatus(err), err, "")
		return
	}
	c.log.Info("plugin removed in the console", "plugin", name, "user", s.id.User)
	c.done(w, r, "/ui/admin?done="+url.QueryEscape("removed "+name), false)
}
