package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/embedded"
	"github.com/ordo-run/ordo/memory/postgres"
)

// Plan is the durable plan: nine steps, eight with side effects through
// every side-effecting bundled tool (a page, two blocks, a chat message, a
// new file, a line appended to a file all runs share, a file written and
// then deleted), each depending on one before. TITLE is replaced by a
// title unique to the run. files.delete is destructive: policy asks, and
// this process approves.
const Plan = `{"version":"1.0","goal":"durable TITLE","timezone":"UTC","actions":[
 {"id":"a1","tool":"notes.create_page","intent":"write","requires":[],"produces":["page_id"],"inputs":{"title":"TITLE"}},
 {"id":"a2","tool":"notes.append_block","intent":"write","requires":["page_id"],"produces":["block_id"],"inputs":{"text":"first block"}},
 {"id":"a3","tool":"notes.get_page","intent":"read","requires":["page_id","block_id"],"produces":["page_url"]},
 {"id":"a4","tool":"chat.post_message","intent":"notify","requires":["page_url"],"produces":["message_ts"],"inputs":{"channel":"ops"},"input_bindings":{"text":"page_url"}},
 {"id":"a5","tool":"notes.append_block","intent":"write","requires":["page_id","message_ts"],"produces":[],"input_bindings":{"text":"message_ts"}},
 {"id":"a6","tool":"files.write","intent":"write","requires":["message_ts"],"produces":[],"inputs":{"path":"TITLE/report.txt","content":"report TITLE","mode":"create_new"}},
 {"id":"a7","tool":"files.write","intent":"write","requires":["message_ts"],"produces":[],"inputs":{"path":"log.txt","content":"TITLE\n","mode":"append"}},
 {"id":"a8","tool":"files.write","intent":"write","requires":["message_ts"],"produces":["file_path"],"inputs":{"path":"TITLE/scratch.txt","content":"scratch"}},
 {"id":"a9","tool":"files.delete","intent":"write","requires":["file_path"],"produces":[],"input_bindings":{"path":"file_path"}}]}`

// approve is the decision this process gives every interrupt (policy
// confirms files.delete).
var approve = contracts.Decision{Kind: contracts.DecisionApprove, By: "crashtest"}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "crashtest:", err)
		os.Exit(1)
	}
}

func run() error {
	mode := flag.String("mode", "start", "start | recover")
	storeArg := flag.String("store", "", "an embedded store file, or a postgres:// DSN")
	schema := flag.String("schema", "", "Postgres schema")
	data := flag.String("data", "", "Ordo data directory (plugin data lives under it)")
	notes := flag.String("notes", "", "ordo-plugin-notes binary")
	chat := flag.String("chat", "", "ordo-plugin-chat binary")
	files := flag.String("files", "", "ordo-plugin-files binary")
	runs := flag.Int("runs", 1, "runs to start")
	prefix := flag.String("prefix", "run", "page titles are PREFIX-N")
	owner := flag.String("owner", "", "lease owner (default: the engine's)")
	ttl := flag.Duration("ttl", time.Second, "lease ttl")
	timeout := flag.Duration("timeout", time.Minute, "give up after")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	st, err := openStore(ctx, *storeArg, *schema)
	if err != nil {
		return err
	}
	defer st.Close()
	env := killpointEnv()
	h, err := host.New(host.WithDataDir(*data), host.WithStartTimeout(30*time.Second),
		host.WithPlugins(host.PluginSpec{Name: "notes", Path: *notes, Env: env}, host.PluginSpec{Name: "chat", Path: *chat, Env: env},
			host.PluginSpec{Name: "files", Path: *files, Env: env}))
	if err != nil {
		return err
	}
	defer h.Close()
	var mu sync.Mutex
	out := json.NewEncoder(os.Stdout)
	e := agent.New(agent.Config{Owner: *owner, LeaseTTL: *ttl}, agent.Deps{
		Tools: h, Store: st,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Events: func(ev agent.Event) {
			mu.Lock()
			defer mu.Unlock()
			_ = out.Encode(ev)
		},
	})
	switch *mode {
	case "start":
		err = start(ctx, e, *runs, *prefix)
	case "recover":
		err = recoverAll(ctx, e, st)
	default:
		err = fmt.Errorf("unknown mode %q", *mode)
	}
	if err != nil {
		return err
	}
	fmt.Println("done")
	return nil
}

// start runs n plans at once; each must complete, unless this process
// lost its lease on it (starved past the 1 s lease on a loaded machine):
// such a run is left to recoverAll, like a dead server's.
func start(ctx context.Context, e *agent.Engine, n int, prefix string) error {
	errs := make(chan error, n)
	for i := range n {
		go func() {
			p, err := contracts.ParsePlan([]byte(strings.ReplaceAll(Plan, "TITLE", fmt.Sprintf("%s-%d", prefix, i))))
			if err != nil {
				errs <- err
				return
			}
			run, err := e.Run(ctx, agent.Request{Plan: p})
			for err == nil && run.Status == contracts.RunInterrupted {
				run, err = e.Resume(ctx, run.ID, approve)
			}
			if err == nil && run.Status != contracts.RunCompleted {
				err = fmt.Errorf("run %s ended %s: %+v", run.ID, run.Status, run.Error)
			}
			if contracts.CodeOf(err) == contracts.CodeLeaseHeld {
				err = nil
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

// recoverAll claims expired runs, and approves interrupted ones, until
// none is left unfinished.
func recoverAll(ctx context.Context, e *agent.Engine, st memory.Checkpointer) error {
	unfinished := []contracts.RunStatus{contracts.RunPending, contracts.RunReady, contracts.RunRunning, contracts.RunInterrupted}
	for {
		if _, err := e.Recover(ctx); err != nil {
			return err
		}
		waiting, err := st.List(ctx, memory.Filter{Status: []contracts.RunStatus{contracts.RunInterrupted}})
		if err != nil {
			return err
		}
		for _, r := range waiting {
			// A dead process's lease on it may not have expired yet: next round.
			if _, err := e.Resume(ctx, r.ID, approve); err != nil && contracts.CodeOf(err) != contracts.CodeLeaseHeld {
				return err
			}
		}
		left, err := st.List(ctx, memory.Filter{Status: unfinished})
		if err != nil {
			return err
		}
		if len(left) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d runs still unfinished (%+v): %w", len(left), left, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// killpointEnv passes this process's ORDO_KILLPOINT* variables (see
// plugins/internal/killpoint) on to the plugins: the host gives a plugin
// only its spec's environment.
func killpointEnv() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "ORDO_KILLPOINT") {
			env[k] = v
		}
	}
	return env
}

func openStore(ctx context.Context, arg, schema string) (memory.Checkpointer, error) {
	var (
		st  memory.Checkpointer
		err error
	)
	if strings.HasPrefix(arg, "postgres") {
		st, err = postgres.Open(ctx, arg, postgres.WithSchema(schema))
	} else {
		st, err = embedded.Open(arg)
	}
	if err != nil {
		return nil, err
	}
	return crashAfter(st)
}

// killer SIGKILLs the process after its Nth successful Save.
type killer struct {
	memory.Checkpointer
	after int64
	delay time.Duration
	saves atomic.Int64
}

// Leaser must pass through, or the engine would run without leases.
type leasingKiller struct {
	*killer
	memory.Leaser
}

// leaseSavingKiller keeps the store's leased first write, counted as a Save.
type leaseSavingKiller struct {
	leasingKiller
	ls memory.LeaseSaver
}

func (k leaseSavingKiller) SaveLeased(ctx context.Context, run *contracts.Run, owner string, ttl time.Duration) error {
	return k.count(k.ls.SaveLeased(ctx, run, owner, ttl))
}

func (k *killer) Save(ctx context.Context, run *contracts.Run) error {
	return k.count(k.Checkpointer.Save(ctx, run))
}

// count kills the process after the Nth successful save.
func (k *killer) count(err error) error {
	if err == nil && k.saves.Add(1) == k.after {
		go func() {
			time.Sleep(k.delay)
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}()
	}
	return err
}

func crashAfter(st memory.Checkpointer) (memory.Checkpointer, error) {
	v := os.Getenv("ORDO_CRASH_AFTER_SAVES")
	if v == "" {
		return st, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return nil, fmt.Errorf("ORDO_CRASH_AFTER_SAVES=%q: want a positive integer", v)
	}
	k := &killer{Checkpointer: st, after: n}
	if d := os.Getenv("ORDO_CRASH_DELAY"); d != "" {
		if k.delay, err = time.ParseDuration(d); err != nil {
			return nil, fmt.Errorf("ORDO_CRASH_DELAY=%q: %w", d, err)
		}
	}
	ls, ok := st.(memory.Leaser)
	if !ok {
		return k, nil
	}
	if lsv, ok := st.(memory.LeaseSaver); ok {
		return leaseSavingKiller{leasingKiller{k, ls}, lsv}, nil
	}
	return leasingKiller{k, ls}, nil
}
