package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/pgtest"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/embedded"
	"github.com/ordo-run/ordo/memory/postgres"
)

// The durability tests run agent/internal/crashtest, a real engine over a
// real store with the real notes and chat plugin binaries, kill it with
// SIGKILL, start it again and check that every side effect happened once.

var (
	binsOnce sync.Once
	binsDir  string
	binsErr  error
)

// bins builds crashtest and the three plugins once per test binary.
func bins(t testing.TB) (crashtest, notes, chat, files string) {
	t.Helper()
	binsOnce.Do(func() {
		if binsDir, binsErr = os.MkdirTemp("", "ordo-durable-"); binsErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", binsDir+"/",
			"github.com/ordo-run/ordo/agent/internal/crashtest",
			"github.com/ordo-run/ordo/cmd/ordo-plugin-notes",
			"github.com/ordo-run/ordo/cmd/ordo-plugin-chat",
			"github.com/ordo-run/ordo/cmd/ordo-plugin-files").CombinedOutput()
		if err != nil {
			binsErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binsErr != nil {
		t.Fatal(binsErr)
	}
	return filepath.Join(binsDir, "crashtest"), filepath.Join(binsDir, "ordo-plugin-notes"), filepath.Join(binsDir, "ordo-plugin-chat"),
		filepath.Join(binsDir, "ordo-plugin-files")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binsDir != "" {
		os.RemoveAll(binsDir)
	}
	os.Exit(code)
}

// crashEnv is one Ordo "server" installation: a store and a data directory
// that every crashtest process started on it shares.
type crashEnv struct {
	t      *testing.T
	store  string // file path or DSN
	schema string
	data   string
}

// outcome of one crashtest process.
type procResult struct {
	killed bool
	events []Event
	stderr string
}

// run starts crashtest and waits; kill, when set, sees each event and
// says whether to SIGKILL the process now.
func (c crashEnv) run(mode string, env []string, kill func(Event) bool, args ...string) procResult {
	c.t.Helper()
	bin, notes, chat, files := bins(c.t)
	cmd := exec.Command(bin, append([]string{"-mode", mode, "-store", c.store, "-schema", c.schema, "-data", c.data,
		"-notes", notes, "-chat", chat, "-files", files, "-ttl", "1s", "-timeout", "60s"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	// The child gives up after its -timeout; one that is still there well
	// after is stuck: SIGQUIT makes it print every goroutine's stack into
	// the stderr the failure shows, rather than the test waiting for ever.
	stuck := time.AfterFunc(3*time.Minute, func() { _ = cmd.Process.Signal(syscall.SIGQUIT) })
	defer stuck.Stop()
	var res procResult
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var ev Event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue // "done"
		}
		res.events = append(res.events, ev)
		if kill != nil && kill(ev) {
			_ = cmd.Process.Kill() // SIGKILL
		}
	}
	err = cmd.Wait()
	res.stderr = stderr.String()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL:
		res.killed = true
	default:
		c.t.Fatalf("crashtest %s: %v\n%s", mode, err, res.stderr)
	}
	return res
}

// openStore opens the env's store from the test process.
func (c crashEnv) openStore() memory.Checkpointer {
	c.t.Helper()
	var (
		st  memory.Checkpointer
		err error
	)
	if c.schema != "" {
		st, err = postgres.Open(context.Background(), c.store, postgres.WithSchema(c.schema))
	} else {
		st, err = embedded.Open(c.store)
	}
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { st.Close() })
	return st
}

// pgEnv makes a fresh schema (dropped at the end) on the test database.
func pgEnv(t *testing.T) crashEnv {
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn, "ordo_durable_")
	return crashEnv{t: t, store: dsn, schema: schema, data: t.TempDir()}
}

// sideEffects is what the plugins recorded, read from their files.
type sideEffects struct {
	pages    map[string][]notesPage // by title
	notesKey map[string]int         // idempotency key -> records
	chat     map[string]int         // message text -> lines
	chatKey  map[string]int         // idempotency key -> lines
	files    map[string]string      // the files root: path -> content
	filesKey map[string]int         // idempotency key -> results journaled
	logLines map[string]int         // log.txt: line -> times
}

type notesPage struct {
	ID     string            `json:"id"`
	Title  string            `json:"title"`
	Blocks []json.RawMessage `json:"blocks"`
}

func readEffects(t *testing.T, data string) sideEffects {
	t.Helper()
	fx := sideEffects{pages: map[string][]notesPage{}, notesKey: map[string]int{}, chat: map[string]int{}, chatKey: map[string]int{},
		files: map[string]string{}, filesKey: map[string]int{}, logLines: map[string]int{}}
	raw, err := os.ReadFile(filepath.Join(data, "plugins", "notes", "notes.json"))
	if err != nil {
		t.Fatal(err)
	}
	var snap struct {
		Pages       map[string]notesPage `json:"pages"`
		Idempotency []struct {
			Key string `json:"key"`
		} `json:"idempotency"`
	}
	if err := json.Unmarshal(raw, &snap); err != nil {
		t.Fatal(err)
	}
	for _, p := range snap.Pages {
		fx.pages[p.Title] = append(fx.pages[p.Title], p)
	}
	for _, r := range snap.Idempotency {
		fx.notesKey[r.Key]++
	}
	raw, err = os.ReadFile(filepath.Join(data, "plugins", "chat", "channels", "ops.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var line struct {
			Text        string `json:"text"`
			Idempotency *struct {
				Key string `json:"key"`
			} `json:"idempotency"`
		}
		if err := json.Unmarshal(l, &line); err != nil {
			t.Fatalf("outbox line %q: %v", l, err)
		}
		fx.chat[line.Text]++
		if line.Idempotency != nil {
			fx.chatKey[line.Idempotency.Key]++
		}
	}
	readFiles(t, filepath.Join(data, "plugins", "files"), &fx)
	return fx
}

// readFiles reads the files plugin's root (every file, temporary ones
// included) and the results its journal holds.
func readFiles(t *testing.T, dir string, fx *sideEffects) {
	t.Helper()
	root := filepath.Join(dir, "root")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(root, path)
		fx.files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	for _, l := range strings.SplitAfter(fx.files["log.txt"], "\n") {
		if l != "" {
			fx.logLines[l]++
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "files-journal.jsonl"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	for _, l := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var e struct {
			Key    string          `json:"key"`
			Result json.RawMessage `json:"result"`
		}
		if len(l) > 0 && json.Unmarshal(l, &e) != nil {
			t.Fatalf("journal line %q", l)
		}
		if e.Result != nil {
			fx.filesKey[e.Key]++
		}
	}
}

// checkExactlyOnce loads every run and checks it against the side
// effects: each completed run made one page with two blocks, one chat
// message naming that page, its report file, its one line in the shared
// log and no scratch file left; every write step's key was performed
// once, with the result the first call would give; the root holds no
// other file (no temporary one); and the runs' step records are whole:
// per action one succeeded record, per idempotency key one started
// record, no failures. It returns the runs.
func checkExactlyOnce(t *testing.T, st memory.Checkpointer, data string, minRuns, maxRuns int) []*contracts.Run {
	t.Helper()
	ctx := context.Background()
	sums, err := st.List(ctx, memory.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) < minRuns || len(sums) > maxRuns {
		t.Fatalf("%d runs in the store, want %d to %d", len(sums), minRuns, maxRuns)
	}
	fx := readEffects(t, data)
	writes := 0
	var runs []*contracts.Run
	for _, s := range sums {
		run, err := st.Load(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
		if run.Status != contracts.RunCompleted {
			// Every checkpointed run completes: even one cut off between
			// its first checkpoint (pending, with the checked plan) and
			// its second is continued by Recover.
			t.Fatalf("run %s is %s (error %+v, %d steps)", run.ID, run.Status, run.Error, len(run.Steps))
		}
		title := strings.TrimPrefix(run.Goal, "durable ")
		pages := fx.pages[title]
		if len(pages) != 1 || len(pages[0].Blocks) != 2 {
			t.Fatalf("run %s: pages titled %q = %+v, want one with 2 blocks", run.ID, title, pages)
		}
		if n := fx.chat[notesURL(pages[0].ID)]; n != 1 {
			t.Fatalf("run %s: %d chat messages for its page, want 1", run.ID, n)
		}
		if got := fx.files[title+"/report.txt"]; got != "report "+title {
			t.Fatalf("run %s: report.txt = %q", run.ID, got)
		}
		if n := fx.logLines[title+"\n"]; n != 1 {
			t.Fatalf("run %s: its line is in log.txt %d times", run.ID, n)
		}
		if _, ok := fx.files[title+"/scratch.txt"]; ok {
			t.Fatalf("run %s: scratch.txt was not deleted", run.ID)
		}
		succeeded := map[string]int{}
		started := map[string]int{}
		keys := map[string]bool{}
		for _, r := range run.Steps {
			switch r.Status {
			case contracts.StepStarted:
				started[r.IdempotencyKey]++
			case contracts.StepSucceeded:
				succeeded[r.ActionID]++
				keys[r.IdempotencyKey] = true
				k := r.Tool + "/" + r.IdempotencyKey
				switch r.Tool {
				case "notes.create_page", "notes.append_block":
					writes++
					if fx.notesKey[k] != 1 {
						t.Fatalf("run %s: key %s performed %d times by notes", run.ID, k, fx.notesKey[k])
					}
				case "chat.post_message":
					writes++
					if fx.chatKey[k] != 1 {
						t.Fatalf("run %s: key %s posted %d times", run.ID, k, fx.chatKey[k])
					}
				case "files.write", "files.delete":
					writes++
					if fx.filesKey[k] != 1 {
						t.Fatalf("run %s: key %s has %d results journaled", run.ID, k, fx.filesKey[k])
					}
					var got map[string]any
					_ = json.Unmarshal(r.Result, &got)
					for field, want := range firstResult[r.ActionID] {
						if got[field] != want {
							t.Fatalf("run %s: %s answered %s, want %s = %v", run.ID, r.ActionID, r.Result, field, want)
						}
					}
				}
			default:
				t.Fatalf("run %s: step %s is %s: %+v", run.ID, r.ActionID, r.Status, r.Error)
			}
		}
		for _, a := range []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9"} {
			if succeeded[a] != 1 {
				t.Fatalf("run %s: action %s succeeded %d times: %+v", run.ID, a, succeeded[a], run.Steps)
			}
		}
		if len(started) != 0 || len(keys) != 9 {
			// A call's start is not written (its key is deterministic), so
			// a re-issued call shares its first attempt's key and record.
			t.Fatalf("run %s: %d started records (want none), %d distinct keys of succeeded steps (want 9)", run.ID, len(started), len(keys))
		}

	}
	if len(fx.files) != len(runs)+1 { // a report each, and log.txt
		t.Fatalf("the files root holds %d files for %d runs: %v", len(fx.files), len(runs), slices.Sorted(maps.Keys(fx.files)))
	}
	if total := len(fx.notesKey) + len(fx.chatKey) + len(fx.filesKey); total != writes {
		t.Fatalf("plugins performed %d keyed writes, the runs' records account for %d", total, writes)
	}
	return runs
}

// firstResult is part of what each files step's first call answers, so a
// re-issued call must answer it too (a7 appends to a file some run
// created: either answer is right).
var firstResult = map[string]map[string]any{
	"a6": {"created": true},
	"a8": {"created": true},
	"a9": {"deleted": true, "kind": "file"},
}

func notesURL(id string) string { return "ordo://notes/" + id }

// Issue 5: a process killed with SIGKILL while its runs execute (embedded
// store); a new process recovers them; every side effect happened once.
func TestKilledProcessResumesRunsExactlyOnce(t *testing.T) {
	dir := t.TempDir()
	c := crashEnv{t: t, store: filepath.Join(dir, "ordo.db"), data: dir}
	started := 0
	res := c.run("start", nil, func(ev Event) bool {
		if ev.Kind == EventStepStarted {
			started++
		}
		return started == 4 // two runs: the kill lands mid-run for both
	}, "-runs", "2")
	if !res.killed {
		t.Fatalf("the process finished before the kill: %d events", len(res.events))
	}
	st := c.openStore()
	running, err := st.List(context.Background(), memory.Filter{Status: []contracts.RunStatus{contracts.RunRunning}})
	if err != nil || len(running) == 0 {
		t.Fatalf("no run was left running by the kill: %v %v", running, err)
	}
	res = c.run("recover", nil, nil)
	recovered := map[string]bool{} // approving files.delete resumes a run once more
	for _, ev := range res.events {
		if ev.Kind == EventResumed {
			recovered[ev.RunID] = true
		}
	}
	if len(recovered) != len(running) {
		t.Fatalf("%d runs recovered, %d were running", len(recovered), len(running))
	}
	checkExactlyOnce(t, st, c.data, 2, 2)
}

// Issue 8: SIGKILL at >= 20 seeded points across runs on Postgres (the
// Nth checkpoint of a process, plus a seeded delay so some kills land
// inside a tool call), restart each time; every run completes, every
// side effect happened once, and step_records hold each record once.
// ORDO_CRASH_SEED picks another seed.
func TestCrashRecoveryPostgres(t *testing.T) {
	c := pgEnv(t)
	st := c.openStore() // migrates the schema
	seed := crashSeed()
	rng := mrand.New(mrand.NewPCG(seed, seed))
	const wantKills, perBatch = 20, 3
	kills, batches := 0, 0
	var points []string
	for kills < wantKills {
		n, delay := 1+rng.IntN(12), time.Duration(rng.IntN(3000))*time.Microsecond
		env := []string{fmt.Sprintf("ORDO_CRASH_AFTER_SAVES=%d", n), "ORDO_CRASH_DELAY=" + delay.String()}
		mode, args := "recover", []string(nil)
		if unfinished(t, st) == 0 {
			mode, args = "start", []string{"-runs", fmt.Sprint(perBatch), "-prefix", fmt.Sprintf("b%d", batches)}
			batches++
		}
		if c.run(mode, env, nil, args...).killed {
			kills++
			points = append(points, fmt.Sprintf("%s@%d+%v", mode, n, delay))
		}
	}
	t.Logf("seed %d: %d kills over %d batches of %d runs: %s", seed, kills, batches, perBatch, strings.Join(points, " "))
	c.run("recover", nil, nil)
	// A start process killed early created only some of its batch.
	runs := checkExactlyOnce(t, st, c.data, batches, batches*perBatch)
	checkStepRows(t, st.(*postgres.Store), runs)
}

// checkStepRows: step_records holds each of a run's records once, at its
// index, none lost, none extra.
func checkStepRows(t *testing.T, st *postgres.Store, runs []*contracts.Run) {
	t.Helper()
	for _, run := range runs {
		rows, err := st.Pool().Query(context.Background(),
			`SELECT idx, action_id, attempt, status FROM step_records WHERE run_id = $1 ORDER BY idx`, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		type row struct {
			Idx     int
			Action  string
			Attempt int
			Status  string
		}
		got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(run.Steps) {
			t.Fatalf("run %s: %d step_records rows, %d records", run.ID, len(got), len(run.Steps))
		}
		for i, r := range got {
			s := run.Steps[i]
			if r.Idx != i || r.Action != s.ActionID || r.Attempt != s.Attempt || r.Status != string(s.Status) {
				t.Fatalf("run %s: row %+v, record %d is %s/%d/%s", run.ID, r, i, s.ActionID, s.Attempt, s.Status)
			}
		}
	}
}

// Seed 004 scenario 1 through the real host and the bundled plugin
// binaries: notes.create_page, then chat.post_message with its page_url.
func TestSeed004WithBundledPlugins(t *testing.T) {
	_, notes, chat, _ := bins(t)
	data := t.TempDir()
	h, err := host.New(host.WithDataDir(data), host.WithStartTimeout(30*time.Second),
		host.WithPlugins(host.PluginSpec{Name: "notes", Path: notes}, host.PluginSpec{Name: "chat", Path: chat}))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	plan := mustPlan(t, `{"version":"1.0","goal":"write the meeting notes and share the link","timezone":"UTC","actions":[
	 {"id":"a1","tool":"notes.create_page","intent":"write","requires":[],"produces":["page_url"],"inputs":{"title":"Meeting notes","content":"decisions"}},
	 {"id":"a2","tool":"chat.post_message","intent":"notify","requires":["page_url"],"produces":["message_ts"],"inputs":{"channel":"#ops"},"input_bindings":{"text":"page_url"}}]}`)
	st, err := embedded.Open(filepath.Join(data, "ordo.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run, err := New(Config{}, Deps{Tools: h, Store: st}).Run(context.Background(), Request{Plan: plan})
	wantStatus(t, run, err, contracts.RunCompleted)
	url, _ := stateOf(t, run, "page_url").(string)
	fx := readEffects(t, data)
	pages := fx.pages["Meeting notes"]
	if len(pages) != 1 || notesURL(pages[0].ID) != url || fx.chat[url] != 1 || len(fx.chatKey) != 1 {
		t.Fatalf("page_url %q, pages %+v, chat %v", url, pages, fx.chat)
	}
}
