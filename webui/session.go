package webui

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/ids"
	"github.com/ordo-run/ordo/mcpserver"
)

// A browser cannot send the bearer header on a page load or an
// EventSource, so signing in trades the token for a session: a random id
// in an HttpOnly, SameSite=Strict cookie, kept in memory (a restart signs
// everyone out). The token itself is never stored or sent back. Every
// state-changing request carries the session's CSRF token as well.
const (
	sessionCookie = "ordo_session"
	preCookie     = "ordo_signin" // the sign-in form's CSRF token, before any session
	csrfField     = "csrf"
	csrfHeader    = "X-CSRF-Token"
)

type session struct {
	key     string // the cookie value's digest (the map key)
	id      mcpserver.Identity
	csrf    string
	expires time.Time
	// ctx ends when the session does (sign-out, expiry), and with it
	// what the session holds open: its run event streams.
	ctx    context.Context
	cancel context.CancelFunc
}

// csrfOK compares a presented CSRF token in constant time.
func (s *session) csrfOK(token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.csrf)) == 1
}

type sessions struct {
	mu  sync.Mutex
	ttl time.Duration
	m   map[string]*session
	now func() time.Time
}

func newSessions(ttl time.Duration) *sessions {
	return &sessions{ttl: ttl, m: map[string]*session{}, now: time.Now}
}

// randomToken is 32 random bytes in hex.
func randomToken() string {
	return ids.Hex(32)
}

// digest keys sessions by a hash of the cookie, so the map holds nothing
// a memory dump could replay.
func digest(v string) string {
	d := sha256.Sum256([]byte(v))
	return hex.EncodeToString(d[:])
}

// MaxSignIns bounds one user's sign-ins held at once (they live in
// memory): signing in once more signs out their oldest.
const MaxSignIns = 32

func (ss *sessions) create(id mcpserver.Identity) (cookie string, s *session) {
	cookie = randomToken()
	s = &session{key: digest(cookie), id: id, csrf: randomToken(), expires: ss.now().Add(ss.ttl)}
	s.ctx, s.cancel = context.WithDeadline(context.Background(), s.expires)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var oldest *session // the user's, to sign out when they hold MaxSignIns
	held := 0
	for k, old := range ss.m { // drop expired sessions as new ones come
		switch {
		case ss.now().After(old.expires):
			old.cancel()
			delete(ss.m, k)
		case old.id.User == id.User:
			held++
			if oldest == nil || old.expires.Before(oldest.expires) {
				oldest = old
			}
		}
	}
	if held >= MaxSignIns {
		oldest.cancel()
		delete(ss.m, oldest.key)
	}
	ss.m[s.key] = s
	return cookie, s
}

// from returns the request's live session, or nil. Two session cookies
// are none: one was planted (see planted).
func (ss *sessions) from(r *http.Request) *session {
	cs := r.CookiesNamed(cookieName(r, sessionCookie))
	if len(cs) != 1 || cs[0].Value == "" {
		return nil
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.m[digest(cs[0].Value)]
	if s == nil || ss.now().After(s.expires) {
		return nil
	}
	return s
}

// planted reports a request with more than one session cookie. Cookies
// ignore ports, so a page on another port of this host can set its own
// (the attacker's session, at a longer path, which the browser sends
// first); the console could not tell whose is whose, so it signs out.
func planted(r *http.Request) bool { return len(r.CookiesNamed(cookieName(r, sessionCookie))) > 1 }

// clearSessionCookies expires the session cookie at every path a cookie
// sent with r may have: each prefix of r's path that ends at a slash,
// with and without it (over TLS only /: see cookieName).
func clearSessionCookies(w http.ResponseWriter, r *http.Request) {
	if overTLS(r) {
		setCookie(w, r, sessionCookie, "", -1)
		return
	}
	p := r.URL.Path
	paths := []string{p}
	for i := range len(p) {
		if p[i] == '/' {
			paths = append(paths, p[:i], p[:i+1])
		}
	}
	for _, at := range slices.Compact(slices.Sorted(slices.Values(paths))) {
		if at != "" {
			setCookie(w, r, sessionCookie, "", -1, at)
		}
	}
}

func (ss *sessions) end(s *session) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s.cancel()
	delete(ss.m, s.key)
}

// setCookie sets a console cookie, at /ui unless a path is given (over
// TLS at /: see cookieName).
func setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int, at ...string) {
	p := "/ui"
	if len(at) > 0 {
		p = at[0]
	}
	if overTLS(r) {
		p = "/"
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName(r, name), Value: value, Path: p, MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: overTLS(r)})
}

// cookieName is a console cookie's name on r. Over TLS it has the
// __Host- prefix, which a browser takes only from this very host over
// https with path / and no domain: a sibling subdomain (the same site, so
// SameSite does not stop it) cannot plant one. Plain http has no such
// guard; there planted catches two session cookies on one request.
func cookieName(r *http.Request, name string) string {
	if overTLS(r) {
		return "__Host-" + name
	}
	return name
}

// overTLS reports a request that reached the browser's end over TLS:
// directly, or through a proxy that ended TLS and says so with
// X-Forwarded-Proto (ordo serve speaks plain HTTP, so an https://
// console is always behind one). Trusting the header costs nothing: a
// Secure cookie is only held back from plain HTTP.
func overTLS(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",") // the proxy nearest the browser
	return strings.EqualFold(strings.TrimSpace(proto), "https")
}

// signInPage shows the token form, with a fresh CSRF token bound to a
// short-lived cookie (no session exists yet to hold it).
// ?next= is the page to go back to after signing in (returnTo).
func (c *Console) signInPage(w http.ResponseWriter, r *http.Request) {
	next := returnTo(r.URL.Query().Get("next"))
	if c.sessions.from(r) != nil {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	c.showSignIn(w, r, http.StatusOK, next, nil)
}

// returnTo is where to go after signing in: the console page the
// sign-in link named, as its path and query, else the runs list. Only a
// clean path under /ui/ passes (no scheme, no host, no //, no backslash
// a browser would read as /, no control character, nothing climbing out
// with ..), so a link to the sign-in page cannot send anyone elsewhere.
func returnTo(next string) string {
	const home = "/ui/runs"
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Opaque != "" || u.User != nil || u.Host != "" || u.Fragment != "" ||
		strings.ContainsAny(next, "\\") || strings.ContainsFunc(next, func(r rune) bool { return r < 0x20 || r == 0x7f }) ||
		!strings.HasPrefix(u.Path, Prefix) || path.Clean(u.Path) != u.Path || strings.HasPrefix(next, "//") {
		return home
	}
	return next
}

func (c *Console) showSignIn(w http.ResponseWriter, r *http.Request, status int, next string, err error) {
	token := randomToken()
	setCookie(w, r, preCookie, token, 600)
	w.WriteHeader(status)
	var ce *contracts.Error
	if err != nil {
		ce = contracts.AsError(err)
	}
	c.render(w, "signin", &session{csrf: token}, map[string]any{"Error": ce, "Next": next})
}

// signIn checks the bearer token the way the HTTP transport does
// (mcpserver.Server.Identify) and starts a session.
func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	next := returnTo(r.PostFormValue("next"))
	// Any of the form cookies will do: one planted beside the console's
	// (cookies ignore ports) must not lock the person out, and one the
	// attacker knows helps only a form they post, refused as cross-origin.
	form, match := r.PostFormValue(csrfField), false
	for _, pre := range r.CookiesNamed(cookieName(r, preCookie)) {
		match = match || pre.Value != "" && subtle.ConstantTimeCompare([]byte(pre.Value), []byte(form)) == 1
	}
	if !match {
		c.showSignIn(w, r, http.StatusForbidden, next, contracts.Errorf(contracts.CodeForbidden, "the sign-in form is stale (CSRF token mismatch): try again").With("field", csrfField))
		return
	}
	id, ok := c.opts.MCP.Identify(strings.TrimSpace(r.PostFormValue("token")))
	if !ok {
		c.log.Info("console sign-in refused", "remote", r.RemoteAddr)
		c.showSignIn(w, r, http.StatusUnauthorized, next, contracts.Errorf(contracts.CodeUnauthorized, "that token is not valid").With("field", "token"))
		return
	}
	cookie, _ := c.sessions.create(id)
	setCookie(w, r, preCookie, "", -1)
	setCookie(w, r, sessionCookie, cookie, int(c.opts.SessionTTL/time.Second))
	c.log.Info("console sign-in", "user", id.User)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (c *Console) signOut(w http.ResponseWriter, r *http.Request, s *session) {
	c.sessions.end(s)
	setCookie(w, r, sessionCookie, "", -1)
	http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
}
