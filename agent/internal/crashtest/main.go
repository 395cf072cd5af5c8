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

// Plan is the durable plan: five steps, four with side effects (a page,
// two blocks, a chat message), each depending on the one before. TITLE is
// replaced by a title unique to the run.
const Plan = `{"version":"1.0","goal":"durable TITLE","timezone":"UTC","actions":[
 {"id":"a1","tool":"notes.create_page","intent":"write","requires":[],"produces":["page_id"],"inputs":{"title":"TITLE"}},
 {"id":"a2","tool":"notes.append_block","intent":"write","requires":["page_id"],"produces":["block_id"],"inputs":{"text":"first block"}},
 {"id":"a3","tool":"notes.get_page","intent":"read","requires":["page_id","block_id"],"produces":["page_url"]},
 {"id":"a4","tool":"chat.post_message","intent":"notify","requires":["page_url"],"produces":["message_ts"],"inputs":{"channel":"ops"},"input_bindings":{"text":"page_url"}},
 {"id":"a5","tool":"notes.append_block","intent":"write","requires":["page_id","message_ts"],"produces":[],"input_bindings":{"text":"message_ts"}}]}`

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
	h, err := host.New(host.WithDataDir(*data), host.WithStartTimeout(30*time.Second),
		host.WithPlugins(host.PluginSpec{Name: "notes", Path: *notes}, host.PluginSpec{Name: "chat", Path: *chat}))
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

// start runs n plans at once; each must complete.
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
			if err == nil && run.Status != contracts.RunCompleted {
				err = fmt.Errorf("run %s ended %s: %+v", run.ID, run.Status, run.Error)
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

// recoverAll claims expired runs until none is left unfinished.
func recoverAll(ctx context.Context, e *agent.Engine, st memory.Checkpointer) error {
	unfinished := []contracts.RunStatus{contracts.RunPending, contracts.RunReady, contracts.RunRunning, contracts.RunInterrupted}
	for {
		if _, err := e.Recover(ctx); err != nil {
			return err
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

func (k *killer) Save(ctx context.Context, run *contracts.Run) error {
	err := k.Checkpointer.Save(ctx, run)
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
	return leasingKiller{k, ls}, nil
}
