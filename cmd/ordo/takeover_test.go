package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/pgtest"
	"github.com/ordo-run/ordo/internal/testwait"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/postgres"
)

// takeoverPlan is what each run does: a page with two blocks, a chat
// message with the page's URL and a line in a log file every run appends
// to, each through a bundled plugin writing to the data both servers
// share. TITLE is unique to the run.
const takeoverPlan = `{"version":"1.0","goal":"takeover TITLE","timezone":"UTC","actions":[
 {"id":"a1","tool":"notes.create_page","intent":"write","requires":[],"produces":["page_id"],"inputs":{"title":"TITLE"}},
 {"id":"a2","tool":"notes.append_block","intent":"write","requires":["page_id"],"produces":["block_id"],"inputs":{"text":"first block"}},
 {"id":"a3","tool":"notes.get_page","intent":"read","requires":["page_id","block_id"],"produces":["page_url"]},
 {"id":"a4","tool":"chat.post_message","intent":"notify","requires":["page_url"],"produces":["message_ts"],"inputs":{"channel":"ops"},"input_bindings":{"text":"page_url"}},
 {"id":"a5","tool":"notes.append_block","intent":"write","requires":["page_id","message_ts"],"produces":[],"input_bindings":{"text":"message_ts"}},
 {"id":"a6","tool":"files.write","intent":"write","requires":["message_ts"],"produces":[],"inputs":{"path":"log.txt","content":"TITLE\n","mode":"append"}}]}`

// Issue 13 item 3: two `ordo serve --http` on one Postgres store sharing
// the plugin data and the files root (docs/durability.md). B stays up;
// each round starts a server A, executes a run through A's MCP endpoint
// and SIGKILLs A after a seeded number of the run's checkpoints
// (ORDO_CRASH_SEED). B claims the run once A's lease (lease_ttl 2s)
// expires and completes it. After ORDO_TAKEOVER_KILLS kills mid-run
// (default 2; `make crash` asks for 10): every run completed, and every
// page, block, message and log line exists exactly once.
func TestTakeoverFinishesDeadServersRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills servers")
	}
	dsn, _ := pgtest.Database(t, "ordo_takeover_")
	kills := 2
	if s := os.Getenv("ORDO_TAKEOVER_KILLS"); s != "" {
		var err error
		if kills, err = strconv.Atoi(s); err != nil || kills < 1 {
			t.Fatalf("ORDO_TAKEOVER_KILLS=%q: want a positive integer", s)
		}
	}
	seed := uint64(20260805)
	if s := os.Getenv("ORDO_CRASH_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	rng := mrand.New(mrand.NewPCG(seed, seed))
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(kills)*time.Minute)
	defer cancel()

	const token = "takeover-token-0123456789"
	share := t.TempDir()
	spec := serverSpec{store: dsn, token: token, share: share,
		config: "lease_ttl: 2s\nhitl: {enabled: false}\npolicy: {confirm_tools: []}\nmemory: {enabled: false}\n"}
	serve(t, ctx, spec) // B
	st, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var points []string
	for round, killed := 0, 0; killed < kills; round++ {
		if round == 4*kills {
			t.Fatalf("only %d of %d kills landed mid-run in %d rounds", killed, kills, round)
		}
		spec.viaFlag = true
		a := serve(t, ctx, spec)
		goal := fmt.Sprintf("takeover r%d", round)
		plan := strings.ReplaceAll(takeoverPlan, "TITLE", strings.TrimPrefix(goal, "takeover "))
		go tryTool(ctx, a.url, token, "execute", map[string]any{"plan": json.RawMessage(plan)})
		// A run's log has 6 or 7 entries: the first, written with the lease
		// just before a1's call, one per step boundary, and the last step
		// with the finish (a5 and a6 may end at one boundary): a kill after
		// entry 2..4 lands mid-run, a few milliseconds before the run ends,
		// so the store is watched closely for it.
		at := int64(2 + rng.IntN(3))
		id := watchRun(t, ctx, st, goal, func(s memory.RunSummary) bool { return s.Status.Final() || s.Seq >= at })
		a.cmd.Process.Kill() // SIGKILL: A's plugins die with it
		a.cmd.Wait()
		if run, err := st.Load(ctx, id); err != nil || run.Status.Final() {
			continue // A finished first: not a kill mid-run
		}
		killed++
		points = append(points, fmt.Sprintf("r%d@%d", round, at))
		waitRun(t, ctx, st, goal, func(s memory.RunSummary) bool { return s.Status.Final() })
	}
	t.Logf("seed %d: A killed mid-run at %s", seed, strings.Join(points, " "))
	checkTakeover(t, ctx, st, share)
}

// watchRun is waitRun polling every millisecond: a run's steps are a few
// milliseconds apart, and a kill meant for one must not see the next.
func watchRun(t *testing.T, ctx context.Context, st memory.Checkpointer, goal string, done func(memory.RunSummary) bool) string {
	t.Helper()
	for {
		sums, err := st.List(ctx, memory.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sums {
			if s.Goal == goal && done(s) {
				return s.ID
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("run %q: %v", goal, ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
}

// waitRun polls the store for the run with goal until done says so, and
// returns its id.
func waitRun(t *testing.T, ctx context.Context, st memory.Checkpointer, goal string, done func(memory.RunSummary) bool) string {
	t.Helper()
	var id string
	testwait.For(t, 2*time.Minute, func() error {
		sums, err := st.List(ctx, memory.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		var last memory.RunSummary
		for _, s := range sums {
			if s.Goal == goal {
				if last = s; done(s) {
					id = s.ID
					return nil
				}
			}
		}
		return fmt.Errorf("run %q: last seen %+v", goal, last)
	})
	return id
}

// checkTakeover: every run completed with each action succeeded once, and
// the shared plugin data holds each run's page (two blocks), message and
// log line exactly once.
func checkTakeover(t *testing.T, ctx context.Context, st memory.Checkpointer, share string) {
	t.Helper()
	var notes struct {
		Pages map[string]struct {
			ID     string            `json:"id"`
			Title  string            `json:"title"`
			Blocks []json.RawMessage `json:"blocks"`
		} `json:"pages"`
	}
	raw, err := os.ReadFile(filepath.Join(share, "plugins", "notes", "notes.json"))
	if err == nil {
		err = json.Unmarshal(raw, &notes)
	}
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string][]string{} // title -> ids
	blocks := map[string]int{}
	for _, p := range notes.Pages {
		pages[p.Title] = append(pages[p.Title], p.ID)
		blocks[p.ID] = len(p.Blocks)
	}
	// Missing until a run got that far: the runs' own errors say more.
	chat, _ := os.ReadFile(filepath.Join(share, "plugins", "chat", "channels", "ops.jsonl"))
	log, _ := os.ReadFile(filepath.Join(share, "files", "log.txt"))
	sums, err := st.List(ctx, memory.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sums {
		run, err := st.Load(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		title := strings.TrimPrefix(run.Goal, "takeover ")
		if run.Status != contracts.RunCompleted {
			t.Fatalf("run %s (%s) is %s: %+v", run.ID, title, run.Status, run.Error)
		}
		succeeded := map[string]int{}
		for _, r := range run.Steps {
			if r.Status == contracts.StepSucceeded {
				succeeded[r.ActionID]++
			}
		}
		for _, a := range []string{"a1", "a2", "a3", "a4", "a5", "a6"} {
			if succeeded[a] != 1 {
				t.Fatalf("run %s (%s): %s succeeded %d times", run.ID, title, a, succeeded[a])
			}
		}
		ids := pages[title]
		if len(ids) != 1 || blocks[ids[0]] != 2 {
			t.Fatalf("run %s: pages titled %s: %v (blocks %v)", run.ID, title, ids, blocks)
		}
		if n := strings.Count(string(chat), `"text":"ordo://notes/`+ids[0]+`"`); n != 1 {
			t.Fatalf("run %s: %d messages with its page's URL", run.ID, n)
		}
		if n := strings.Count("\n"+string(log), "\n"+title+"\n"); n != 1 {
			t.Fatalf("run %s: its line is in log.txt %d times:\n%s", run.ID, n, log)
		}
	}
	if len(pages) != len(sums) {
		t.Fatalf("%d page titles for %d runs", len(pages), len(sums))
	}
}
