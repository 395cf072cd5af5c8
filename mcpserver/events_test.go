package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testmcp"
	"github.com/ordo-run/ordo/internal/testwait"
	"github.com/ordo-run/ordo/mcpserver"
)

// readEvents reads the events resource at uri.
func readEvents(t *testing.T, c *client.Client, uri string) (*mcpserver.EventsPage, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
	if err != nil {
		return nil, err
	}
	var page mcpserver.EventsPage
	if err := json.Unmarshal([]byte(res.Contents[0].(mcp.TextResourceContents).Text), &page); err != nil {
		t.Fatalf("%s: %v", uri, err)
	}
	return &page, nil
}

// sameEntries fails unless got are exactly the stored log's entries, in
// order, each once.
func sameEntries(t *testing.T, e *env, runID string, got []contracts.RunDelta) {
	t.Helper()
	want, err := e.engine.Log(context.Background(), runID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d entries %v, the log holds %d", len(got), seqs(got), len(want))
	}
	for i := range want {
		g, _ := json.Marshal(got[i])
		w, _ := json.Marshal(want[i])
		if string(g) != string(w) {
			t.Fatalf("entry %d:\n got %s\nwant %s", i, g, w)
		}
	}
}

func seqs(ds []contracts.RunDelta) []int64 {
	out := make([]int64, len(ds))
	for i, d := range ds {
		out[i] = d.Seq
	}
	return out
}

func TestEventsResource(t *testing.T) {
	e, _ := newChainEnv(t)
	transports(t, e, clientOpts{}, func(t *testing.T, c *client.Client) {
		out := call(t, c, "execute", map[string]any{"plan": chainPlan()})
		id := out["run_id"].(string)

		all, err := readEvents(t, c, "ordo://runs/"+id+"/events")
		if err != nil {
			t.Fatal(err)
		}
		if all.RunID != id || all.Status != contracts.RunCompleted || len(all.Events) < 3 || all.Next != all.Events[len(all.Events)-1].Seq {
			t.Fatalf("page: %+v", all)
		}
		if all.Events[0].Kind != "created" || all.Events[0].Summary == "" || all.Events[0].At.IsZero() {
			t.Fatalf("first event: %+v", all.Events[0])
		}
		var entries []contracts.RunDelta
		for _, ev := range all.Events {
			if ev.Seq != ev.Entry.Seq || ev.Kind != ev.Entry.Kind() {
				t.Fatalf("event %+v describes another entry", ev)
			}
			entries = append(entries, *ev.Entry)
		}
		sameEntries(t, e, id, entries)
		// Folding the events rebuilds the stored run.
		folded, err := contracts.FoldRun(entries)
		if err != nil {
			t.Fatal(err)
		}
		stored, _ := e.engine.Get(context.Background(), id)
		if f, s := string(mustJSON(t, folded)), string(mustJSON(t, stored)); f != s {
			t.Fatalf("fold differs from the stored run:\n%s\n%s", f, s)
		}

		// Paging two at a time with after=next gives the same entries,
		// none lost or repeated, and ends on a final status.
		var paged []contracts.RunDelta
		after := int64(0)
		for range 100 {
			page, err := readEvents(t, c, fmt.Sprintf("ordo://runs/%s/events?after=%d&limit=2", id, after))
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Events) > 2 {
				t.Fatalf("limit 2 returned %d", len(page.Events))
			}
			for _, ev := range page.Events {
				paged = append(paged, *ev.Entry)
			}
			if len(page.Events) == 0 {
				if page.Next != after || !page.Status.Final() {
					t.Fatalf("empty page: %+v", page)
				}
				break
			}
			after = page.Next
		}
		sameEntries(t, e, id, paged)

		for _, bad := range []string{"?after=-1", "?after=x", "?limit=0"} {
			if _, err := readEvents(t, c, "ordo://runs/"+id+"/events"+bad); err == nil {
				t.Fatalf("%s read", bad)
			}
		}
		if _, err := readEvents(t, c, "ordo://runs/run_nope/events"); err == nil {
			t.Fatal("unknown run read")
		}
	})

	// Another user's run is not theirs to read.
	ts := e.httpServer(t)
	bob := httpClient(t, ts.URL, userToken, clientOpts{})
	out := call(t, bob, "execute", map[string]any{"plan": chainPlan()})
	eve := httpClient(t, ts.URL, otherToken, clientOpts{})
	if _, err := readEvents(t, eve, "ordo://runs/"+out["run_id"].(string)+"/events"); err == nil {
		t.Fatal("eve read bob's run's events")
	}
}

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	id, event, data string
}

// sseStream reads events from an SSE response body.
type sseStream struct {
	resp *http.Response
	r    *bufio.Reader
}

func openEvents(t *testing.T, ctx context.Context, url, token string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// next returns the next event; io.EOF when the server ended the stream.
func (s *sseStream) next() (sseEvent, error) {
	var ev sseEvent
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if ev.data != "" || ev.event != "" {
				return ev, nil
			}
		case strings.HasPrefix(line, ":"): // a comment: heartbeat
		case strings.HasPrefix(line, "id: "):
			ev.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			ev.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.data += strings.TrimPrefix(line, "data: ")
		}
	}
}

// entry decodes an event's data, checking it names its own cursor.
func (ev sseEvent) entry(t *testing.T) contracts.RunDelta {
	t.Helper()
	var v mcpserver.EventView
	if err := json.Unmarshal([]byte(ev.data), &v); err != nil {
		t.Fatalf("event data %q: %v", ev.data, err)
	}
	if strconv.FormatInt(v.Seq, 10) != ev.id || v.Entry == nil || v.Entry.Seq != v.Seq || v.Kind != ev.event || v.Kind != v.Entry.Kind() {
		t.Fatalf("event id %s / %s describes %+v", ev.id, ev.event, v)
	}
	return *v.Entry
}

// gatedPlan: upper, then wait for the gate, then upper again.
func gatedPlan() *contracts.Plan {
	p, err := contracts.ParsePlan([]byte(`{"version":"1.0","goal":"wait in the middle","timezone":"UTC","actions":[
		{"id":"a1","tool":"text.upper","intent":"transform","requires":[],"produces":["upper"],"inputs":{"text":"x"}},
		{"id":"a2","tool":"test.wait","intent":"other","requires":["upper"],"produces":["waited"],"inputs":{"label":"mid"}},
		{"id":"a3","tool":"text.upper","intent":"transform","requires":["waited"],"produces":[],"input_bindings":{"text":"waited"}}]}`))
	if err != nil {
		panic(err)
	}
	return p
}

// TestEventStreamResumes follows a run over SSE, drops the connection
// mid-run, reconnects with Last-Event-ID, and gets every stored entry
// exactly once. The run is driven by the engine directly, not through
// this server's tools, so the stream sees it by polling the store (as it
// would a run another server drives).
func TestEventStreamResumes(t *testing.T) {
	e := newEnv(t, withConfig(agent.Config{}))
	ts := e.httpServer(t)
	open := e.closeGate()
	defer open()
	ctx := context.Background()
	run, err := e.engine.Plan(ctx, agent.Request{Plan: gatedPlan(), UserID: "bob"})
	if err != nil || run.Status != contracts.RunReady {
		t.Fatalf("plan: %v %v", run, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := e.engine.Execute(ctx, run.ID)
		done <- err
	}()
	url := ts.URL + "/runs/" + run.ID + "/events"

	// First connection: read two entries, then drop it (the gate keeps the
	// run from finishing meanwhile).
	cctx, drop := context.WithCancel(ctx)
	resp := openEvents(t, cctx, url, userToken, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &sseStream{resp: resp, r: bufio.NewReader(resp.Body)}
	var got []contracts.RunDelta
	last := ""
	for range 2 {
		ev, err := s.next()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.entry(t))
		last = ev.id
	}
	drop()
	resp.Body.Close()

	// Reconnect after the last event seen, let the run finish, and read
	// until the server ends the stream after the final entry.
	resp = openEvents(t, ctx, url, userToken, map[string]string{"Last-Event-ID": last})
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reconnect: %d", resp.StatusCode)
	}
	open()
	s = &sseStream{resp: resp, r: bufio.NewReader(resp.Body)}
	for {
		ev, err := s.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.entry(t))
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st := mcpserver.EntryStatus(&got[len(got)-1]); st != contracts.RunCompleted {
		t.Fatalf("the stream ended on status %s", st)
	}
	sameEntries(t, e, run.ID, got)
	t.Logf("entries %v: 1 and 2 on the first connection, the rest after Last-Event-ID %s", seqs(got), last)

	// ?after= works like Last-Event-ID; nothing left on a final run is 204.
	resp2 := openEvents(t, ctx, url+"?after=1", userToken, nil)
	s = &sseStream{resp: resp2, r: bufio.NewReader(resp2.Body)}
	var rest []contracts.RunDelta
	for {
		ev, err := s.next()
		if err != nil {
			break
		}
		rest = append(rest, ev.entry(t))
	}
	resp2.Body.Close()
	if !reflect.DeepEqual(seqs(rest), seqs(got[1:])) {
		t.Fatalf("after=1: %v, want %v", seqs(rest), seqs(got[1:]))
	}
	resp3 := openEvents(t, ctx, url, userToken, map[string]string{"Last-Event-ID": strconv.FormatInt(got[len(got)-1].Seq, 10)})
	resp3.Body.Close()
	if resp3.StatusCode != http.StatusNoContent {
		t.Fatalf("reconnect after the final entry: %d, want 204", resp3.StatusCode)
	}
}

func TestEventStreamRefusals(t *testing.T) {
	e, _ := newChainEnv(t)
	ts := e.httpServer(t)
	bob := httpClient(t, ts.URL, userToken, clientOpts{})
	id := call(t, bob, "execute", map[string]any{"plan": chainPlan()})["run_id"].(string)
	url := ts.URL + "/runs/" + id + "/events"
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		token  string
		header map[string]string
		url    string
		status int
		code   contracts.Code
	}{
		{"no token", "", nil, url, http.StatusUnauthorized, contracts.CodeUnauthorized},
		{"bad token", "not-a-valid-token-at-all", nil, url, http.StatusUnauthorized, contracts.CodeUnauthorized},
		{"another user's run", otherToken, nil, url, http.StatusNotFound, contracts.CodeRunNotFound},
		{"unknown run", userToken, nil, ts.URL + "/runs/run_nope/events", http.StatusNotFound, contracts.CodeRunNotFound},
		{"bad cursor", userToken, map[string]string{"Last-Event-ID": "x"}, url, http.StatusBadRequest, contracts.CodeInvalidInput},
		{"bad after", userToken, nil, url + "?after=-2", http.StatusBadRequest, contracts.CodeInvalidInput},
	} {
		resp := openEvents(t, ctx, tc.url, tc.token, tc.header)
		var body contracts.Error
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || body.Code != tc.code {
			t.Errorf("%s: %d %+v, want %d %d", tc.name, resp.StatusCode, body, tc.status, tc.code)
		}
	}
	// The admin may read it; the owner gets the whole run and the end.
	for _, tok := range []string{adminToken, userToken} {
		resp := openEvents(t, ctx, url, tok, nil)
		s := &sseStream{resp: resp, r: bufio.NewReader(resp.Body)}
		var got []contracts.RunDelta
		for {
			ev, err := s.next()
			if err != nil {
				break
			}
			got = append(got, ev.entry(t))
		}
		resp.Body.Close()
		sameEntries(t, e, id, got)
	}
}

// TestProgressCarriesCursor: each progress notification ends with the
// cursor of the log entry its event follows.
func TestProgressCarriesCursor(t *testing.T) {
	e, _ := newChainEnv(t)
	var mu sync.Mutex
	var msgs []string
	c := e.stdioClient(t, clientOpts{onNotif: func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationProgress) {
			if m, ok := n.Params.AdditionalFields["message"].(string); ok {
				mu.Lock()
				msgs = append(msgs, m)
				mu.Unlock()
			}
		}
	}})
	res, err := callRaw(c, "execute", map[string]any{"plan": chainPlan()}, &mcp.Meta{ProgressToken: "p1"})
	if err != nil || res.IsError {
		t.Fatalf("execute: %v %s", err, testmcp.Text(res))
	}
	waitCompleted(t, func() string {
		mu.Lock()
		defer mu.Unlock()
		if len(msgs) == 0 {
			return ""
		}
		return msgs[len(msgs)-1]
	})
	mu.Lock()
	defer mu.Unlock()
	id := structured(t, res)["run_id"].(string)
	final, _ := e.engine.Get(context.Background(), id)
	if want := fmt.Sprintf("(cursor %d)", final.Seq); !strings.HasSuffix(msgs[len(msgs)-1], want) {
		t.Fatalf("last progress %q, want it to end with %s", msgs[len(msgs)-1], want)
	}
	for _, m := range msgs {
		if !strings.Contains(m, "(cursor ") {
			t.Fatalf("progress %q carries no cursor", m)
		}
	}
}

// TestEventStreamEndsOnShutdown: a stream following a run that waits for
// a person ends when the server shuts down (EndStreams), rather than
// holding the HTTP server's shutdown.
func TestEventStreamEndsOnShutdown(t *testing.T) {
	e := newEnv(t) // plan approval on: the run waits
	ts := e.httpServer(t)
	run, err := e.engine.Plan(context.Background(), agent.Request{Plan: gatedPlan(), UserID: "bob"})
	if err != nil || run.Status != contracts.RunInterrupted {
		t.Fatalf("plan: %+v %v", run, err)
	}
	resp := openEvents(t, context.Background(), ts.URL+"/runs/"+run.ID+"/events", userToken, nil)
	defer resp.Body.Close()
	s := &sseStream{resp: resp, r: bufio.NewReader(resp.Body)}
	if _, err := s.next(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() {
		for {
			if _, err := s.next(); err != nil {
				ended <- err
				return
			}
		}
	}()
	select {
	case err := <-ended:
		t.Fatalf("the stream ended before the shutdown: %v", err)
	case <-time.After(2 * ssePollForTest):
	}
	e.srv.EndStreams()
	select {
	case err := <-ended:
		if err != io.EOF {
			t.Fatalf("stream: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream outlived the shutdown")
	}
}

// ssePollForTest is a little more than the stream's store poll.
const ssePollForTest = 600 * time.Millisecond

// waitCompleted waits until last, the last progress message seen ("" for
// none), says the run completed: stdio writes notifications from its own
// goroutine, so they may land after the call's result.
func waitCompleted(t *testing.T, last func() string) {
	t.Helper()
	testwait.Until(t, 10*time.Second, "the final progress notification", func() bool {
		return strings.Contains(last(), ": completed")
	})
}

// TestEventStreamCursorPastTheEnd: a cursor past the run's last entry
// (no stream ever gave it) is refused, on a live run as on a final one,
// rather than opening a stream that waits for entries it skips: it never
// ended, not even when the run did.
func TestEventStreamCursorPastTheEnd(t *testing.T) {
	e, _ := newChainEnv(t)
	ts := e.httpServer(t)
	bob := httpClient(t, ts.URL, userToken, clientOpts{})
	waiting := call(t, bob, "plan", map[string]any{"plan": chainPlan()})["run_id"].(string)
	done := call(t, bob, "execute", map[string]any{"plan": chainPlan()})["run_id"].(string)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, id := range []string{waiting, done} {
		run, err := e.engine.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range []map[string]string{{"Last-Event-ID": strconv.FormatInt(run.Seq+1, 10)}, nil} {
			url := ts.URL + "/runs/" + id + "/events"
			if h == nil {
				url += "?after=" + strconv.FormatInt(run.Seq+1000, 10)
			}
			resp := openEvents(t, ctx, url, userToken, h)
			var body contracts.Error
			_ = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || body.Code != contracts.CodeInvalidInput {
				t.Errorf("%s run, cursor past seq %d (%v %s): %s %+v, want 400 %d", run.Status, run.Seq, h, url, resp.Status, body, contracts.CodeInvalidInput)
			}
		}
	}
}

// TestEventStreamDropsAClientThatStopsReading: a client that opens a
// run's stream and stops reading loses it once a write has waited the
// stream's write timeout, rather than holding the stream (a goroutine, a
// connection, a store poll) for as long as it keeps the connection; it
// may reconnect with Last-Event-ID and lose nothing (TestEventStreamResumes).
// The run waits for approval, so a stream still held never ends.
func TestEventStreamDropsAClientThatStopsReading(t *testing.T) {
	e := newEnv(t)
	mcpserver.SetStreamWriteTimeout(e.srv, time.Second)
	// Small socket buffers on both ends, so that a stream of a few hundred
	// KB fills them (the kernel would otherwise take megabytes).
	ts := httptest.NewUnstartedServer(e.srv.Handler())
	ts.Listener = smallSendBuffers{ts.Listener}
	ts.Start()
	t.Cleanup(ts.Close)
	big := strings.Repeat("x", 200<<10) // a plan is at most 1 MiB
	var actions []string
	for i := range 4 {
		actions = append(actions, fmt.Sprintf(`{"id":"a%d","tool":"text.upper","intent":"transform","requires":[],"produces":[],"inputs":{"text":%q}}`, i, big))
	}
	p, err := contracts.ParsePlan([]byte(`{"version":"1.0","goal":"shout a lot","timezone":"UTC","actions":[` + strings.Join(actions, ",") + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	run, err := e.engine.Plan(context.Background(), agent.Request{Plan: p, UserID: "bob"})
	if err != nil || run.Status != contracts.RunInterrupted {
		t.Fatalf("plan: %v %v", run, err)
	}

	// A client with a small receive buffer asks for the stream and reads nothing.
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /runs/%s/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", run.ID, userToken)
	time.Sleep(3 * time.Second) // three write timeouts, with nobody reading

	// Now read: what the server managed to send, then the end of a stream
	// it gave up on. A stream still held would send the rest and wait.
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, err := io.Copy(io.Discard, conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the stream was still open after its client stopped reading (%d bytes read)", n)
	}
	if n >= int64(len(big))*4 {
		t.Fatalf("read %d bytes: the whole log got through, so nothing was ever blocked", n)
	}
}

// smallSendBuffers gives each accepted connection a 4 KB send buffer.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// A cursor beyond a live run's last entry is refused (1000) by the events
// resource, as by the stream (TestEventStreamCursorPastTheEnd): a reader
// that waited after it would skip every entry up to it, the final one too.
func TestEventsCursorBeyondTheEnd(t *testing.T) {
	e, _ := newChainEnv(t)
	ts := e.httpServer(t)
	bob := httpClient(t, ts.URL, userToken, clientOpts{})
	id := call(t, bob, "plan", map[string]any{"plan": chainPlan()})["run_id"].(string)
	run, err := e.engine.Get(context.Background(), id)
	if err != nil || run.Status.Final() {
		t.Fatalf("run %v: %v", run, err)
	}
	beyond := run.Seq + 5
	if _, err := readEvents(t, bob, fmt.Sprintf("ordo://runs/%s/events?after=%d", id, beyond)); err == nil || !strings.Contains(err.Error(), "beyond the last entry") {
		t.Fatalf("resource after=%d of a run at seq %d: %v", beyond, run.Seq, err)
	}
	if page, err := readEvents(t, bob, fmt.Sprintf("ordo://runs/%s/events?after=%d", id, run.Seq)); err != nil || len(page.Events) != 0 || page.Next != run.Seq {
		t.Fatalf("resource after the last entry: %+v %v", page, err)
	}
}
