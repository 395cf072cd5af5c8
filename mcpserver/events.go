package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
)

// A run's events are the entries of its append-only log
// (contracts.RunDelta), each numbered by the run's sequence: the cursor a
// client passes back to read what came after. They are served two ways,
// with the same ownership as the run record:
//
//   - the MCP resource ordo://runs/{id}/events?after=N&limit=M, one page
//     (EventsPage) per read;
//   - GET /runs/{id}/events on the HTTP listener, as Server-Sent Events:
//     what is stored after the cursor (Last-Event-ID, else ?after=), then
//     the run live until the entry that makes it final.
//
// MCP 2026-07-28 dropped resumable streams; a client that loses either
// view reconnects with the last seq it saw and loses or repeats nothing.

// Resource and endpoint addresses of the event stream.
const (
	uriEventsTmpl   = "ordo://runs/{id}/events{?after,limit}"
	eventsURISuffix = "/events"
	eventsPath      = "GET /runs/{id}/events"
)

// Event stream limits and pacing.
const (
	eventsPageDefault = 500  // entries per resource read without limit
	eventsPageMax     = 1000 // the most a read returns
	ssePoll           = 500 * time.Millisecond
	sseHeartbeat      = 15 * time.Second
	sseBatch          = 256 // entries read from the store at a time
	sseWriteTimeout   = 30 * time.Second
)

// EventView is one entry of a run's log as clients see it: its cursor,
// what it records (RunDelta.Kind) in a line for a person, when, and the
// entry itself (folding the entries in order rebuilds the run).
type EventView struct {
	Seq     int64               `json:"seq"`
	Kind    string              `json:"kind"`
	Summary string              `json:"summary"`
	At      time.Time           `json:"at"`
	Entry   *contracts.RunDelta `json:"entry"`
}

// NewEventView describes a log entry.
func NewEventView(d *contracts.RunDelta) EventView {
	at := d.UpdatedAt
	if at.IsZero() && d.Run != nil {
		at = d.Run.UpdatedAt
	}
	return EventView{Seq: d.Seq, Kind: d.Kind(), Summary: d.Summary(), At: at, Entry: d}
}

// EntryStatus is the run's status as of entry d.
func EntryStatus(d *contracts.RunDelta) contracts.RunStatus {
	if d.Run != nil {
		return d.Run.Status
	}
	return d.Status
}

// EventsPage is one read of the events resource: the entries after the
// cursor asked for, the cursor to ask with next (the last seq returned,
// or the one given when nothing is new), and the run's status as of that
// cursor (final: nothing will follow).
type EventsPage struct {
	RunID  string              `json:"run_id"`
	Events []EventView         `json:"events"`
	Next   int64               `json:"next"`
	Status contracts.RunStatus `json:"status"`
}

// parseEventsURI reads ordo://runs/{id}/events[?after=N][&limit=M].
func parseEventsURI(uri string) (runID string, after int64, limit int, err error) {
	rest, ok := strings.CutPrefix(uri, runURIPrefix)
	path, query, _ := strings.Cut(rest, "?")
	runID, ok2 := strings.CutSuffix(path, eventsURISuffix)
	if !ok || !ok2 || runID == "" || strings.Contains(runID, "/") {
		return "", 0, 0, contracts.Errorf(contracts.CodeInvalidInput, "resource %q names no run's events (want ordo://runs/ID/events?after=N)", uri).With("field", "uri")
	}
	q, perr := url.ParseQuery(query)
	if perr != nil {
		return "", 0, 0, contracts.Errorf(contracts.CodeInvalidInput, "resource %q: query: %w", uri, perr).With("field", "uri")
	}
	if after, err = parseCursor("after", q.Get("after")); err != nil {
		return "", 0, 0, err
	}
	limit = eventsPageDefault
	if v := q.Get("limit"); v != "" {
		n, cerr := strconv.Atoi(v)
		if cerr != nil || n < 1 {
			return "", 0, 0, contracts.Errorf(contracts.CodeInvalidInput, "limit %q: want a positive integer", v).With("field", "limit")
		}
		limit = min(n, eventsPageMax)
	}
	return runID, after, limit, nil
}

// parseCursor reads a cursor: a sequence number >= 0 ("" is 0).
func parseCursor(field, v string) (int64, error) {
	if v = strings.TrimSpace(v); v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, contracts.Errorf(contracts.CodeInvalidInput, "%s %q: want a sequence number (an integer >= 0)", field, v).With("field", field)
	}
	return n, nil
}

// CheckCursor refuses a cursor beyond the run's last entry (1000 naming
// field, with the run's seq): no entry was ever numbered so, and a reader
// waiting after it would skip every entry up to it, the final one too,
// and wait for ever.
func CheckCursor(run *contracts.Run, field string, after int64) error {
	if after > run.Seq {
		return contracts.Errorf(contracts.CodeInvalidInput, "%s %d is beyond the last entry of run %s (seq %d)", field, after, run.ID, run.Seq).
			With("field", field).With("seq", run.Seq)
	}
	return nil
}

// readEvents serves the events resource.
func (s *Server) readEvents(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	uri := req.Params.URI
	runID, after, limit, err := parseEventsURI(uri)
	if err != nil {
		return nil, err
	}
	page, err := s.eventsPage(ctx, runID, after, limit)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(page)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInternal, "encode events: %w", err)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(data)}}, nil
}

// eventsPage reads up to limit entries of a run the caller may see after
// the cursor.
func (s *Server) eventsPage(ctx context.Context, runID string, after int64, limit int) (*EventsPage, error) {
	run, err := s.loadRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	if err := CheckCursor(run, "after", after); err != nil {
		return nil, err
	}
	entries, err := s.opts.Engine.Log(ctx, runID, after, limit)
	if err != nil {
		return nil, err
	}
	page := &EventsPage{RunID: run.ID, Events: make([]EventView, 0, len(entries)), Next: after, Status: run.Status}
	for i := range entries {
		d := &entries[i]
		page.Events = append(page.Events, NewEventView(d))
		page.Next, page.Status = d.Seq, EntryStatus(d)
	}
	return page, nil
}

// serveEvents streams a run's events as Server-Sent Events: each entry is
// "id: SEQ", "event: KIND", "data: EventView". It sends what is stored
// after the cursor (Last-Event-ID, else ?after=, else from the start),
// then follows the run — woken by the engine's events for runs this
// server drives, and polling the store so that runs another server
// sharing it drives are followed too — and ends after the entry that makes
// the run final. A comment line every 15 s keeps idle proxies from
// closing the stream. Nothing is left to send on a final run: 204, which
// tells an EventSource to stop reconnecting. A cursor past the run's last
// entry is 400.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	runID := r.PathValue("id")
	field, raw := "Last-Event-ID", r.Header.Get("Last-Event-ID")
	if raw == "" {
		field, raw = "after", r.URL.Query().Get("after")
	}
	after, err := parseCursor(field, raw)
	if err != nil {
		writeHTTPError(w, http.StatusBadRequest, contracts.AsError(err))
		return
	}
	run, err := s.loadRun(ctx, runID)
	if err != nil {
		ce := contracts.AsError(err)
		status := http.StatusInternalServerError
		switch {
		case ce.Code == contracts.CodeRunNotFound:
			status = http.StatusNotFound
		case ce.Code/1000 == 1:
			status = http.StatusBadRequest
		}
		writeHTTPError(w, status, ce)
		return
	}
	// No stream gave a cursor past the last stored entry: waiting for the
	// entries after it would skip the one that ends the run, and never end.
	if err := CheckCursor(run, field, after); err != nil {
		writeHTTPError(w, http.StatusBadRequest, contracts.AsError(err))
		return
	}
	if run.Status.Final() && after == run.Seq {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if _, ok := w.(http.Flusher); !ok {
		writeHTTPError(w, http.StatusInternalServerError, contracts.Errorf(contracts.CodeInternal, "this connection cannot stream"))
		return
	}
	// Watch before the first read, so an entry written between the read
	// and the wait still wakes the stream.
	wake, unwatch := s.runWatch.watch(runID)
	defer unwatch()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	// Each write gets streamWriteTimeout to reach the client: one that
	// stops reading loses its stream (and may resume it) rather than
	// holding it for ever. An error ends the stream: the client went away.
	rc := http.NewResponseController(w)
	send := func(write func() error) error {
		_ = rc.SetWriteDeadline(time.Now().Add(s.streamWriteTimeout))
		if err := write(); err != nil {
			return err
		}
		return rc.Flush()
	}
	if send(func() error { w.WriteHeader(http.StatusOK); return nil }) != nil {
		return
	}

	poll := time.NewTicker(ssePoll)
	defer poll.Stop()
	beat := time.NewTicker(sseHeartbeat)
	defer beat.Stop()
	for {
		entries, err := s.opts.Engine.Log(ctx, runID, after, sseBatch)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Info("event stream ended", "run", runID, "err", err)
				_ = send(func() error { return writeSSE(w, 0, "error", contracts.AsError(err)) })
			}
			return
		}
		final := false
		if send(func() error {
			for i := range entries {
				d := &entries[i]
				if err := writeSSE(w, d.Seq, d.Kind(), NewEventView(d)); err != nil {
					return err
				}
				after, final = d.Seq, EntryStatus(d).Final()
				if final {
					break
				}
			}
			return nil
		}) != nil || final {
			return
		}
		if len(entries) == sseBatch {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-s.closing:
			return
		case <-wake:
		case <-poll.C:
		case <-beat.C:
			if send(func() error { _, err := fmt.Fprint(w, ": keep-alive\n\n"); return err }) != nil {
				return
			}
		}
	}
}

// writeSSE writes one event; seq 0 writes no id (an error is no cursor).
func writeSSE(w http.ResponseWriter, seq int64, event string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var b strings.Builder
	if seq > 0 {
		fmt.Fprintf(&b, "id: %d\n", seq)
	}
	fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", event, data)
	_, err = w.Write([]byte(b.String()))
	return err
}

// RunEvent tells the server that a run moved on, so event streams that
// follow it read its new entries at once rather than at their next poll.
// The server hears the events of the runs its own tool calls drive; pass
// it the engine's other events (agent.Deps.Events) to wake streams on
// those too.
func (s *Server) RunEvent(ev agent.Event) { s.runWatch.wake(ev.RunID) }

// EndStreams ends every event stream (they hold their connections
// open): call it when the HTTP server shuts down
// (http.Server.RegisterOnShutdown). Idempotent.
func (s *Server) EndStreams() { s.closeOnce.Do(func() { close(s.closing) }) }

// runWatchers wakes the event streams following a run.
type runWatchers struct {
	mu    sync.Mutex
	byRun map[string]map[chan struct{}]struct{}
}

func newRunWatchers() *runWatchers {
	return &runWatchers{byRun: map[string]map[chan struct{}]struct{}{}}
}

// watch returns a channel that receives after wake(runID); wakes that
// come while one is pending coalesce.
func (w *runWatchers) watch(runID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	if w.byRun[runID] == nil {
		w.byRun[runID] = map[chan struct{}]struct{}{}
	}
	w.byRun[runID][ch] = struct{}{}
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		delete(w.byRun[runID], ch)
		if len(w.byRun[runID]) == 0 {
			delete(w.byRun, runID)
		}
		w.mu.Unlock()
	}
}

func (w *runWatchers) wake(runID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.byRun[runID] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
