package webui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/webui"
)

// TestSignIn: pages need a session; a wrong token or a stale form is
// refused; the right token gives an HttpOnly SameSite=Strict cookie (not
// the token); sign-out ends the session. Every answer carries the CSP.
func TestSignIn(t *testing.T) {
	s := newStack(t)
	b := s.browser(t)
	res, _ := b.get("/ui/runs")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/ui/signin" {
		t.Fatalf("runs without a session: %s %s", res.Status, res.Header.Get("Location"))
	}
	res, body := b.get("/ui/signin")
	if got := res.Header.Get("Content-Security-Policy"); got != webui.CSP || !strings.Contains(got, "script-src 'self'") || strings.Contains(got, "unsafe-inline") {
		t.Fatalf("CSP %q", got)
	}
	if !strings.Contains(body, `<button type="submit">Sign in</button>`) {
		t.Fatalf("no Sign in button:\n%s", body)
	}
	if res, _ := b.post("/ui/signin", url.Values{"token": {"not-a-token-at-all-0000"}}); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong token: %s", res.Status)
	}
	if res, _ := b.post("/ui/signin", url.Values{"token": {bobToken}, "csrf": {"forged"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("forged sign-in form: %s", res.Status)
	}
	b.get("/ui/signin")
	res, _ = b.post("/ui/signin", url.Values{"token": {bobToken}})
	var session *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == "ordo_session" {
			session = c
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || strings.Contains(session.Value, bobToken) {
		t.Fatalf("session cookie %+v", session)
	}
	res, body = b.get("/ui/runs")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "bob") {
		t.Fatalf("runs after sign-in: %s", res.Status)
	}
	if res, _ := b.post("/ui/signout", url.Values{}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out: %s", res.Status)
	}
	b.c.Jar.SetCookies(mustURL(t, s.ts.URL+"/ui"), []*http.Cookie{session}) // the old cookie is dead
	if res, _ := b.get("/ui/runs"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("runs after sign-out: %s", res.Status)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestCSRFRefused: a form posted without the session's CSRF token (what
// another site could make a browser send) is refused and changes nothing.
func TestCSRFRefused(t *testing.T) {
	s := newStack(t)
	b := s.browser(t).signIn(bobToken)
	for _, token := range []string{"", "0123"} {
		res, _ := b.post("/ui/runs", url.Values{"plan": {echoPlan("g", "x", 1)}, "csrf": {token}})
		if res.StatusCode != http.StatusForbidden {
			t.Fatalf("csrf %q: %s", token, res.Status)
		}
	}
	id := b.startPlan(echoPlan("g", "x", 1))
	s.waitStatus(t, id, contracts.RunInterrupted)
	res, _ := b.post("/ui/runs/"+id+"/decide", url.Values{"decision": {"approve"}, "csrf": {"nope"}})
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("decide without csrf: %s", res.Status)
	}
	runs, err := s.store.List(context.Background(), memory.Filter{})
	if err != nil || len(runs) != 1 || runs[0].Status != contracts.RunInterrupted {
		t.Fatalf("runs %+v %v: want the one run, still interrupted", runs, err)
	}
}

// TestRunApprovedAndEscaped: a run started from the form waits for plan
// approval; the Approve form resumes it; the run page shows what a tool
// returned escaped (a <script> in a result never reaches the page as
// markup) and the run's event stream serves the cookie-signed-in browser.
func TestRunApprovedAndEscaped(t *testing.T) {
	s := newStack(t)
	b := s.browser(t).signIn(bobToken)
	const evil = `<script>alert("pwned")</script><img src=x onerror=alert(1)>`
	id := b.startPlan(echoPlan("shout "+evil, evil, 2))
	s.waitStatus(t, id, contracts.RunInterrupted)
	_, page := b.get("/ui/runs/" + id)
	for _, want := range []string{">Approve</button>", ">Edit</button>", ">Reject</button>", `data-events="/ui/runs/` + id + `/events?after=`, `<svg class="dag"`} {
		if !strings.Contains(page, want) {
			t.Errorf("interrupted run page lacks %q", want)
		}
	}
	res, body := b.post("/ui/runs/"+id+"/decide", url.Values{"decision": {"approve"}, "note": {"looks right"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve: %s\n%s", res.Status, body)
	}
	run := s.waitStatus(t, id, contracts.RunCompleted)
	if by := run.Decisions[0].Decision.By; by != "bob" {
		t.Errorf("decided by %q, want bob", by)
	}
	res, page = b.get("/ui/runs/" + id)
	if res.Header.Get("Content-Security-Policy") != webui.CSP {
		t.Errorf("run page CSP %q", res.Header.Get("Content-Security-Policy"))
	}
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "<img src=x") {
		t.Fatalf("tool output reached the page as markup:\n%s", page)
	}
	if !strings.Contains(page, "&lt;script&gt;alert(") || !strings.Contains(page, "looks right") || !strings.Contains(page, "Fork from here") {
		t.Fatalf("run page lacks the escaped result, the note or the fork button:\n%s", page)
	}
	if n := strings.Count(page, "<script"); n != 1 { // console.js only
		t.Fatalf("%d script elements, want 1", n)
	}

	// The event stream, with the cookie, is the one GET /runs/{id}/events
	// serves; a reconnecting EventSource's Last-Event-ID resumes it after
	// the last event it saw, repeating and losing nothing.
	ids := eventIDs(t, b, id, "")
	if len(ids) < 2 || ids[len(ids)-1] != fmt.Sprint(run.Seq) {
		t.Fatalf("event ids %v, want up to %d", ids, run.Seq)
	}
	if rest := eventIDs(t, b, id, ids[len(ids)-2]); len(rest) != 1 || rest[0] != ids[len(ids)-1] {
		t.Fatalf("resumed after %s: ids %v, want [%s]", ids[len(ids)-2], rest, ids[len(ids)-1])
	}
}

// eventIDs reads a finished run's event stream through the console,
// after the Last-Event-ID lastSeen when given, and returns its ids.
func eventIDs(t *testing.T, b *browser, runID, lastSeen string) []string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.s.ts.URL+"/ui/runs/"+runID+"/events?after=0", nil)
	if lastSeen != "" {
		req.Header.Set("Last-Event-ID", lastSeen)
	}
	res, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %s %s", res.Status, res.Header.Get("Content-Type"))
	}
	var ids []string
	for sc := bufio.NewScanner(res.Body); sc.Scan(); {
		if v, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			ids = append(ids, v)
		}
	}
	return ids
}

// TestPrivacy: a user sees, acts on and follows only their own runs; an
// admin sees everyone's and the admin page; a user gets no admin page.
func TestPrivacy(t *testing.T) {
	s := newStack(t)
	bob := s.browser(t).signIn(bobToken)
	id := bob.startPlan(echoPlan("bob's secret goal", "x", 1))
	s.waitStatus(t, id, contracts.RunInterrupted)

	cat := s.browser(t).signIn(catToken)
	if _, body := cat.get("/ui/runs"); strings.Contains(body, id) || strings.Contains(body, "secret goal") {
		t.Fatal("cat's list shows bob's run")
	}
	for _, path := range []string{"/ui/runs/" + id, "/ui/runs/" + id + "/live", "/ui/runs/" + id + "/events"} {
		if res, body := cat.get(path); res.StatusCode != http.StatusNotFound || strings.Contains(body, "secret goal") {
			t.Errorf("cat GET %s: %s", path, res.Status)
		}
	}
	for _, path := range []string{"/ui/runs/" + id + "/decide", "/ui/runs/" + id + "/fork"} {
		if res, _ := cat.post(path, url.Values{"decision": {"approve"}, "from_action": {"a1"}}); res.StatusCode != http.StatusNotFound {
			t.Errorf("cat POST %s: %s", path, res.Status)
		}
	}
	if res, _ := cat.get("/ui/admin"); res.StatusCode != http.StatusForbidden {
		t.Errorf("cat GET /ui/admin: %s", res.Status)
	}
	if run := s.waitStatus(t, id, contracts.RunInterrupted); len(run.Decisions) != 0 {
		t.Fatal("cat's decision reached bob's run")
	}

	ada := s.browser(t).signIn(adaToken)
	if _, body := ada.get("/ui/runs"); !strings.Contains(body, id) || !strings.Contains(body, "<td>bob</td>") {
		t.Fatal("the admin's list lacks bob's run and its user")
	}
	res, body := ada.get("/ui/admin")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "testtools") || !strings.Contains(body, "token: HIDDEN") {
		t.Fatalf("admin page: %s\n%s", res.Status, body)
	}
}

// TestValidatePlan: the page's inline check answers the schema's coded
// error for a bad plan, and the action count for a good one.
func TestValidatePlan(t *testing.T) {
	s := newStack(t)
	b := s.browser(t).signIn(bobToken)
	check := func(text string) map[string]any {
		req, _ := http.NewRequest(http.MethodPost, s.ts.URL+"/ui/plan/validate", strings.NewReader(text))
		req.Header.Set("X-CSRF-Token", b.csrf)
		req.Header.Set("X-Ordo-Fetch", "1")
		res, err := b.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if out := check(echoPlan("g", "x", 3)); out["ok"] != true || out["actions"] != float64(3) {
		t.Fatalf("good plan: %v", out)
	}
	out := check(`{"version":"1.0","goal":"g","actions":[{"id":"a1"}]}`)
	e, _ := out["error"].(map[string]any)
	if out["ok"] != false || e == nil || e["code"] != float64(contracts.CodeSchemaViolation) {
		t.Fatalf("bad plan: %v", out)
	}
}

// TestRunPageSize renders the page of a 200-step run (the page, then the
// live part the script refetches) and bounds its bytes.
func TestRunPageSize(t *testing.T) {
	s := newStack(t)
	b := s.browser(t).signIn(bobToken)
	id := b.startPlan(echoPlan("two hundred steps", strings.Repeat("long text ", 40), 200))
	b.approve(id)
	run := s.waitStatus(t, id, contracts.RunCompleted)
	if len(run.Steps) != 200 {
		t.Fatalf("%d steps", len(run.Steps))
	}
	start := time.Now()
	res, page := b.get("/ui/runs/" + id)
	took := time.Since(start)
	if res.StatusCode != http.StatusOK || strings.Count(page, "Fork from here") != 200 {
		t.Fatalf("run page: %s, %d fork buttons", res.Status, strings.Count(page, "Fork from here"))
	}
	t.Logf("200-step run page: %d bytes in %v", len(page), took)
	if len(page) > 1<<20 {
		t.Fatalf("200-step run page is %d bytes, want under 1 MiB", len(page))
	}
}

// TestForkAndTools: "Fork from here" starts the person's new run at that
// action; the tools page lists the catalog and the recommender's hits.
func TestForkAndTools(t *testing.T) {
	s := newStack(t)
	b := s.browser(t).signIn(bobToken)
	id := b.startPlan(echoPlan("chain", "x", 2))
	b.approve(id)
	s.waitStatus(t, id, contracts.RunCompleted)
	b.get("/ui/runs/" + id)
	res, body := b.post("/ui/runs/"+id+"/fork", url.Values{"from_action": {"a2"}})
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/ui/runs/run_") || loc == "/ui/runs/"+id {
		t.Fatalf("fork: %s %s\n%s", res.Status, loc, body)
	}
	forked := s.waitStatus(t, strings.TrimPrefix(loc, "/ui/runs/"), contracts.RunInterrupted)
	if forked.UserID != "bob" || len(forked.Steps) != 1 || forked.Steps[0].ActionID != "a1" {
		t.Fatalf("fork %+v: want bob's, with a1 taken over", forked)
	}
	if res, _ := b.post("/ui/runs/"+id+"/fork", url.Values{"from_action": {"zz"}}); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("fork from an unknown action: %s", res.Status)
	}
	_, page := b.get("/ui/tools?q=echo+a+text")
	if !strings.Contains(page, "<code>test.echo</code>") || !strings.Contains(page, "Best for") || !strings.Contains(page, "Echo a text back") {
		t.Fatalf("tools page:\n%s", page)
	}
}

// TestSecureCookiesBehindTLSProxy: `ordo serve` speaks plain HTTP, so a
// console on https:// is behind a proxy that ends TLS and says so
// (X-Forwarded-Proto: https, as httputil.ReverseProxy's SetXForwarded
// and nginx's usual configuration send): the sign-in and session cookies
// are Secure then, so a browser never sends them over plain HTTP.
func TestSecureCookiesBehindTLSProxy(t *testing.T) {
	s := newStack(t)
	backend := mustURL(t, s.ts.URL)
	proxy := httptest.NewTLSServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(backend)
		r.SetXForwarded()
	}})
	t.Cleanup(proxy.Close)
	b := s.browser(t)
	b.c.Transport = proxy.Client().Transport
	b.s = &stack{ts: proxy}
	res, _ := b.get("/ui/signin")
	cookies := res.Cookies()
	res, _ = b.post("/ui/signin", url.Values{"token": {bobToken}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in through the proxy: %s", res.Status)
	}
	cookies = append(cookies, res.Cookies()...)
	names := map[string]bool{}
	for _, c := range cookies {
		if c.MaxAge > 0 {
			names[c.Name] = true
			if !c.Secure {
				t.Errorf("cookie %s over https is not Secure", c.Name)
			}
		}
	}
	if !names["__Host-ordo_signin"] || !names["__Host-ordo_session"] {
		t.Fatalf("cookies set: %v, want __Host- ones (a subdomain cannot set those)", names)
	}
	for _, c := range cookies {
		if c.Path != "/" || c.Domain != "" {
			t.Errorf("cookie %s at path %q domain %q: a __Host- cookie is at / for its host alone", c.Name, c.Path, c.Domain)
		}
	}
	if res, body := b.get("/ui/runs"); res.StatusCode != http.StatusOK || !strings.Contains(body, ">bob<") {
		t.Fatalf("runs through the proxy: %s", res.Status)
	}
	// A session cookie without the prefix (what a sibling subdomain could
	// set for the whole site) is no sign-in over https.
	direct := s.browser(t).signIn(catToken)
	planted := s.browser(t)
	planted.c.Transport = proxy.Client().Transport
	planted.s = &stack{ts: proxy}
	planted.c.Jar.SetCookies(mustURL(t, proxy.URL+"/ui"), direct.c.Jar.Cookies(mustURL(t, s.ts.URL+"/ui")))
	if res, _ := planted.get("/ui/runs"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("an unprefixed session cookie over https: %s, want the sign-in", res.Status)
	}
}

// TestCrossOriginPostsRefused: cookies ignore ports, so a page on another
// port of the console's host (or a sibling subdomain) can plant the
// sign-in form's CSRF cookie and post a matching form: the victim would
// be signed in as the attacker (login CSRF). A browser's post from
// another origin (Sec-Fetch-Site, else Origin against Host) is refused
// with 403 and code 2003 before anything else is read; the console's own
// posts (same-origin) go through.
func TestCrossOriginPostsRefused(t *testing.T) {
	s := newStack(t)
	attacker := "http://127.0.0.1:1" // another port of the same host: same-site
	post := func(b *browser, path string, form url.Values, h map[string]string) *http.Response {
		t.Helper()
		if !form.Has("csrf") {
			form.Set("csrf", b.csrf)
		}
		if strings.HasSuffix(path, "/decide") {
			form.Set("seq", b.seq)
		}
		req, _ := http.NewRequest(http.MethodPost, s.ts.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		res, err := b.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	victim := s.browser(t)
	victim.get("/ui/signin") // holds a planted-looking pair: cookie and form field agree
	for _, h := range []map[string]string{{"Sec-Fetch-Site": "same-site", "Origin": attacker}, {"Origin": attacker}} {
		res := post(victim, "/ui/signin", url.Values{"token": {bobToken}}, h)
		if res.StatusCode != http.StatusForbidden {
			t.Fatalf("sign-in posted from %v: %s, want 403", h, res.Status)
		}
		for _, c := range res.Cookies() {
			if c.Name == "ordo_session" {
				t.Fatalf("sign-in posted from %v set a session", h)
			}
		}
	}
	if res, _ := victim.get("/ui/runs"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the victim is signed in after a cross-origin sign-in: %s", res.Status)
	}

	b := s.browser(t).signIn(bobToken)
	id := b.startPlan(echoPlan("g", "x", 1))
	s.waitStatus(t, id, contracts.RunInterrupted)
	b.get("/ui/runs/" + id)
	if res := post(b, "/ui/runs/"+id+"/decide", url.Values{"decision": {"approve"}}, map[string]string{"Sec-Fetch-Site": "cross-site"}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("approve posted from another site: %s, want 403", res.Status)
	}
	if run := s.waitStatus(t, id, contracts.RunInterrupted); len(run.Decisions) != 0 {
		t.Fatalf("decisions %+v after a refused post", run.Decisions)
	}
	if res := post(b, "/ui/runs/"+id+"/decide", url.Values{"decision": {"approve"}}, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": s.ts.URL}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve from the console itself: %s, want 303", res.Status)
	}
	s.waitStatus(t, id, contracts.RunCompleted)
}

// TestSignInReturnsToThePage: the page that found its sign-in gone (a
// restart, an expiry) links to /ui/signin?next=ITS_PATH, and signing in
// goes back there; a next that is not a console path (another site, a
// scheme, //host, a backslash, a path climbing out of /ui/) goes to the
// runs list: no open redirect.
func TestSignInReturnsToThePage(t *testing.T) {
	s := newStack(t)
	signIn := func(next string) string {
		t.Helper()
		b := s.browser(t)
		_, body := b.get("/ui/signin?next=" + url.QueryEscape(next))
		form := url.Values{"token": {bobToken}}
		if m := regexp.MustCompile(`name="next" value="([^"]*)"`).FindStringSubmatch(body); m != nil {
			form.Set("next", html.UnescapeString(m[1]))
		}
		res, body := b.post("/ui/signin", form)
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign in with next %q: %s\n%s", next, res.Status, body)
		}
		// Signed in already, the sign-in page goes to next as well.
		again, _ := b.get("/ui/signin?next=" + url.QueryEscape(next))
		if got := again.Header.Get("Location"); got != res.Header.Get("Location") {
			t.Fatalf("signed in, /ui/signin?next=%q goes to %q, the sign-in to %q", next, got, res.Header.Get("Location"))
		}
		return res.Header.Get("Location")
	}
	for _, next := range []string{"/ui/runs/run_0123?x=1", "/ui/session?id=a%26b", "/ui/tools?q=notes"} {
		if got := signIn(next); got != next {
			t.Errorf("next %q: went to %q", next, got)
		}
	}
	for _, next := range []string{"", "https://evil.example/ui/runs", "//evil.example/ui/runs", "/\\evil.example", "/ui/../mcp",
		"/ui/runs/..", "javascript:alert(1)", "/mcp", "ui/runs", "/ui/\r\nSet-Cookie: x=1", "/ui/static/../../x"} {
		if got := signIn(next); got != "/ui/runs" {
			t.Errorf("next %q: went to %q, want /ui/runs", next, got)
		}
	}
	// A form posted with a next of its own is held to the same rule.
	b := s.browser(t)
	b.get("/ui/signin")
	if res, _ := b.post("/ui/signin", url.Values{"token": {bobToken}, "next": {"//evil.example"}}); res.Header.Get("Location") != "/ui/runs" {
		t.Fatalf("posted next //evil.example: went to %q", res.Header.Get("Location"))
	}
}

// TestSignOutEndsEventStreams: signing out ends the session's open event
// streams too; before, a stream opened before the sign-out went on
// serving the run's steps and results to a browser no longer signed in.
func TestSignOutEndsEventStreams(t *testing.T) {
	s := newStack(t)
	b := s.browser(t).signIn(bobToken)
	id := b.startPlan(echoPlan("g", "after sign-out", 1))
	run := s.waitStatus(t, id, contracts.RunInterrupted)
	res, err := b.c.Get(s.ts.URL + "/ui/runs/" + id + "/events?after=0")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("events: %s", res.Status)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		for sc := bufio.NewScanner(res.Body); sc.Scan(); {
			lines <- sc.Text()
		}
	}()
	last := fmt.Sprintf("id: %d", run.Seq)
	for seen, backlog := false, true; backlog; { // up to the end of the event of the run as it waits
		select {
		case l := <-lines:
			seen = seen || l == last
			backlog = !seen || l != ""
		case <-time.After(10 * time.Second):
			t.Fatalf("no %q in the event stream", last)
		}
	}
	b.get("/ui/runs/" + id)
	if res, _ := b.post("/ui/signout", url.Values{}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out: %s", res.Status)
	}
	var after []string
	ended := time.After(10 * time.Second)
	for open := true; open; {
		select {
		case l, ok := <-lines:
			after, open = append(after, l), ok
		case <-ended:
			t.Fatalf("the event stream is still open 10 s after signing out (read %q)", after)
		}
	}
	s.browser(t).signIn(adaToken).approve(id) // the run moves on: nothing more reaches the old stream
	s.waitStatus(t, id, contracts.RunCompleted)
	for _, l := range after {
		if strings.HasPrefix(l, "event: ") || strings.HasPrefix(l, "data: ") {
			t.Fatalf("after signing out the stream sent %q", l)
		}
	}
}

// TestPlantedSessionCookieRefused: cookies ignore ports, so a page on
// another port of the console's host can plant its own console cookie
// (the attacker's session) at a longer path, which the browser then sends
// first: the victim, signed in as themselves, would act as the attacker
// on /ui/runs pages, starting runs the attacker sees. Two session cookies
// on one request sign out: the console refuses it (401, code 2001, the
// sign-in page), clears the cookie at every path that could hold it, and
// starts nothing.
func TestPlantedSessionCookieRefused(t *testing.T) {
	s := newStack(t)
	attacker := s.browser(t).signIn(bobToken)
	var planted *http.Cookie
	for _, c := range attacker.c.Jar.Cookies(mustURL(t, s.ts.URL+"/ui")) {
		if c.Name == "ordo_session" {
			planted = &http.Cookie{Name: c.Name, Value: c.Value, Path: "/ui/runs"}
		}
	}
	victim := s.browser(t).signIn(catToken)
	victim.c.Jar.SetCookies(mustURL(t, s.ts.URL+"/ui/runs"), []*http.Cookie{planted})
	res, body := victim.get("/ui/runs/new")
	if res.StatusCode != http.StatusUnauthorized || strings.Contains(body, ">bob<") || !strings.Contains(body, "2001") {
		t.Fatalf("a page with a planted cookie: %s\n%s", res.Status, body)
	}
	cleared := map[string]bool{}
	for _, c := range res.Cookies() {
		if c.Name == "ordo_session" && c.MaxAge < 0 {
			cleared[c.Path] = true
		}
	}
	if !cleared["/ui/runs"] || !cleared["/ui"] {
		t.Fatalf("cleared cookies at %v, want /ui/runs and /ui among them", cleared)
	}
	// A form posted with the planted session's own CSRF token starts nothing.
	victim.signIn(catToken)
	victim.c.Jar.SetCookies(mustURL(t, s.ts.URL+"/ui/runs"), []*http.Cookie{planted})
	res, _ = victim.post("/ui/runs", url.Values{"plan": {echoPlan("typed by cat", "x", 1)}, "csrf": {attacker.csrf}})
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a form posted with a planted cookie: %s", res.Status)
	}
	if runs, err := s.store.List(context.Background(), memory.Filter{}); err != nil || len(runs) != 0 {
		t.Fatalf("runs %+v %v: want none", runs, err)
	}
	if res, _ := victim.get("/ui/runs"); res.StatusCode != http.StatusSeeOther { // cleared: sign in again
		t.Fatalf("after the refusal: %s", res.Status)
	}
}

// TestSignInsPerUserBounded: a user's sign-ins are held in memory, so
// one token signing in again and again (a script, a leaked token) would
// grow the server without end; each user keeps their most recent sign-ins
// and the oldest is signed out.
func TestSignInsPerUserBounded(t *testing.T) {
	s := newStack(t)
	first := s.browser(t).signIn(bobToken)
	cat := s.browser(t).signIn(catToken)
	var last *browser
	for range webui.MaxSignIns {
		last = s.browser(t).signIn(bobToken)
	}
	if res, _ := first.get("/ui/runs"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("bob's oldest sign-in after %d more: %s, want signed out", webui.MaxSignIns, res.Status)
	}
	for _, b := range []*browser{last, cat} {
		if res, _ := b.get("/ui/runs"); res.StatusCode != http.StatusOK {
			t.Fatalf("a recent sign-in, or another user's: %s", res.Status)
		}
	}
}

// TestPlantedSignInCookieNoLockout: a page on another port of the host
// can plant a sign-in form cookie of its own at /ui/signin, which the
// browser sends before the console's; the console's form still signs in
// (any of the cookies matching the form's token will do: a planted one
// only helps a form the attacker posts, and that is refused as
// cross-origin), rather than refusing every sign-in as stale.
func TestPlantedSignInCookieNoLockout(t *testing.T) {
	s := newStack(t)
	b := s.browser(t)
	b.c.Jar.SetCookies(mustURL(t, s.ts.URL+"/ui/signin"), []*http.Cookie{{Name: "ordo_signin", Value: "planted", Path: "/ui/signin"}})
	b.get("/ui/signin")
	if res, body := b.post("/ui/signin", url.Values{"token": {bobToken}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in beside a planted sign-in cookie: %s\n%s", res.Status, body)
	}
}
