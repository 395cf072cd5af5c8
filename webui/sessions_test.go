package webui_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// TestSessions: two runs started from the form with one session name are
// that session's turns; the sessions list and the session page show them
// in order with goal, status, answer and a link to each run, and offer a
// new turn prefilled with the session. Another user's session of that name
// is theirs alone: cat sees neither bob's list entry nor his page (404,
// with or without naming bob), and cat's own session of the same name
// holds only cat's turn. An admin sees everyone's sessions with the user.
// A session name the engine refuses starts nothing.
func TestSessions(t *testing.T) {
	s := newStack(t)
	bob := s.browser(t).signIn(bobToken)
	const sid = `plans/<b>q2`
	var ids []string
	for _, goal := range []string{"first turn goal", "second turn goal"} {
		id := bob.start(url.Values{"plan": {echoPlan(goal, "said "+goal, 1)}, "session": {" " + sid + " "}})
		bob.approve(id)
		run := s.waitStatus(t, id, contracts.RunCompleted)
		if run.SessionID != sid || run.Result == nil {
			t.Fatalf("run %s: session %q, result %+v", id, run.SessionID, run.Result)
		}
		ids = append(ids, id)
	}
	alone := bob.startPlan(echoPlan("not in a session", "x", 1))
	escaped := "plans/&lt;b&gt;q2"

	_, list := bob.get("/ui/sessions")
	if !strings.Contains(list, escaped) || !strings.Contains(list, "<td>2</td>") || !strings.Contains(list, "second turn goal") || strings.Contains(list, "<b>q2") {
		t.Fatalf("sessions list:\n%s", list)
	}
	page := "/ui/session?id=" + url.QueryEscape(sid)
	res, body := bob.get(page)
	first, second := strings.Index(body, "first turn goal"), strings.Index(body, "second turn goal")
	if res.StatusCode != http.StatusOK || first < 0 || second < first {
		t.Fatalf("session page: %s, turns at %d and %d:\n%s", res.Status, first, second, body)
	}
	for _, want := range []string{`href="/ui/runs/` + ids[0] + `"`, `href="/ui/runs/` + ids[1] + `"`, "st-completed", "Done: first turn goal", ">New turn</a>"} {
		if !strings.Contains(body, want) {
			t.Errorf("session page lacks %q", want)
		}
	}
	if strings.Contains(body, alone) || strings.Contains(body, "<b>q2") {
		t.Fatalf("session page shows a run of no session, or the name as markup:\n%s", body)
	}
	if _, body := bob.get("/ui/runs/" + ids[0]); !strings.Contains(body, "turn of session") || !strings.Contains(body, escaped) {
		t.Errorf("a turn's run page does not name its session")
	}
	if _, body := bob.get("/ui/runs/new?session=" + url.QueryEscape(sid)); !strings.Contains(body, `name="session" value="`+escaped+`"`) {
		t.Errorf("New turn does not prefill the session:\n%s", body)
	}

	cat := s.browser(t).signIn(catToken)
	if _, body := cat.get("/ui/sessions"); strings.Contains(body, escaped) || strings.Contains(body, "turn goal") {
		t.Fatal("cat's sessions list shows bob's session")
	}
	for _, path := range []string{page, page + "&user=bob"} {
		if res, body := cat.get(path); res.StatusCode != http.StatusNotFound || strings.Contains(body, "turn goal") {
			t.Errorf("cat GET %s: %s", path, res.Status)
		}
	}
	catRun := cat.start(url.Values{"plan": {echoPlan("cat's own turn", "x", 1)}, "session": {sid}})
	s.waitStatus(t, catRun, contracts.RunInterrupted)
	if _, body := cat.get(page); !strings.Contains(body, "cat&#39;s own turn") || strings.Contains(body, "turn goal") {
		t.Errorf("cat's session of the same name:\n%s", body)
	}

	ada := s.browser(t).signIn(adaToken)
	_, body = ada.get("/ui/sessions")
	if !strings.Contains(body, "<td>bob</td>") || !strings.Contains(body, "<td>cat</td>") {
		t.Errorf("the admin's sessions list lacks bob's or cat's session with its user:\n%s", body)
	}
	link := regexp.MustCompile(`href="(/ui/session\?id=[^"]*&amp;user=bob)"`).FindStringSubmatch(body)
	if link == nil {
		t.Fatalf("no link to bob's session:\n%s", body)
	}
	if res, body := ada.get(html.UnescapeString(link[1])); res.StatusCode != http.StatusOK || !strings.Contains(body, "first turn goal") {
		t.Errorf("the admin follows the link to bob's session: %s", res.Status)
	}
	if _, body := ada.get("/ui/sessions?user=cat"); strings.Contains(body, "<td>bob</td>") {
		t.Errorf("the admin's list filtered to cat shows bob's session")
	}
	res, body = ada.get(page + "&user=bob")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "second turn goal") || strings.Contains(body, "New turn") {
		t.Errorf("the admin's view of bob's session: %s\n%s", res.Status, body)
	}

	res, body = bob.post("/ui/runs", url.Values{"plan": {echoPlan("g", "x", 1)}, "session": {strings.Repeat("s", 200)}})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "session_id") {
		t.Errorf("an over-long session name: %s\n%s", res.Status, body)
	}
	if _, body := bob.get("/ui/sessions"); strings.Count(body, `href="/ui/session?`) != 1 {
		t.Errorf("a refused session name left a session behind:\n%s", body)
	}
}
