package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordo-run/ordo/cmd/ordo/internal/app"
	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/contracts"
)

// useConfigListen is --http given without an address.
const useConfigListen = "config"

func newServeCmd(g *globals) *cobra.Command {
	var httpAddr string
	cmd := &cobra.Command{
		Use:   "serve [--http [ADDR]]",
		Short: "Serve Ordo over MCP (stdio by default, or streamable HTTP)",
		Long: `Serve the MCP tools plan, execute, approve, fork_run, run_status, list_runs, search_tools and the
admin plugin tools. Over stdio (the default) the client is the local user; over HTTP every
request needs a bearer token from http.tokens or $ORDO_HTTP_TOKENS, and serve --http refuses
to start without one ('ordo tokens new NAME' makes one). Plugins dropped into plugins_dir
are picked up while serving, and so are upstreams added to or removed from the
configuration file ('ordo plugins add --mcp ... --save'). Finished runs older than
retention.runs are pruned at start and daily, and the logs of the other runs that finished
over an hour ago are compacted to one snapshot each (as 'ordo runs compact' does).

With --http, GET /runs/ID/events on the same listener streams a run's log entries as
Server-Sent Events (same bearer tokens; a user sees only their own runs), resumable with
Last-Event-ID; the MCP resource ordo://runs/ID/events?after=N pages the same entries.
The web console is at /ui on the same listener: sign in with the same token.`,
		Example: `  ordo serve
  ordo serve --http                 # on http.listen (default 127.0.0.1:7411)
  ORDO_HTTP_TOKENS='alice:user:TOKEN' ordo serve --http   # TOKEN from 'ordo tokens new alice'
  ORDO_TOKEN_ALICE=... ordo serve --http 0.0.0.0:7411 --config ordo.yaml
  ordo serve --http --store postgres://ordo@db/ordo   # runs shared with other servers`,
		Args: args(0, 1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			switch {
			case len(pos) == 1 && httpAddr == useConfigListen: // "--http ADDR", not "--http=ADDR"
				httpAddr = pos[0]
			case len(pos) == 1:
				return usageError(fmt.Errorf("serve takes no arguments; did you mean --http %s?", pos[0]))
			}
			g.logLevel = slog.LevelInfo
			cfg, log, err := g.load()
			if err != nil {
				return err
			}
			flagAddr := httpAddr != useConfigListen // the address came from --http, not the file
			if httpAddr == useConfigListen {
				httpAddr = cfg.HTTP.Listen
			} else if httpAddr != "" {
				if err := config.ListenAddr("http.listen", httpAddr); err != nil {
					return contracts.AsError(err).With("flag", "--http")
				}
			}
			if httpAddr != "" && len(cfg.HTTP.Tokens) == 0 {
				return contracts.Errorf(contracts.CodeInvalidConfig, "ordo serve --http needs a bearer token for its clients, and neither http.tokens nor %s gives one: "+
					"run 'ordo tokens new NAME' and add what it prints to the configuration or the environment", config.EnvHTTPTokens).With("key", "http.tokens")
			}
			env, err := g.env()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			gate := make(chan struct{})
			a, err := app.Open(ctx, cfg, log, app.Options{
				IndexDir: filepath.Join(cfg.DataDir, "index"), Env: g.io.Env, PluginStartGate: gate,
			})
			if err != nil {
				return err
			}
			// Deferred in reverse: stop the background work, wait for it,
			// then close the app.
			var bg sync.WaitGroup
			defer a.Close()
			defer bg.Wait()
			defer stop()
			srv, err := a.MCPServer(version(), g.io.Env)
			if err != nil {
				return err
			}
			defer srv.Close()
			stopMetrics, err := a.ServeMetrics() // metrics.listen, if set
			if err != nil {
				return err
			}
			defer stopMetrics()
			bg.Go(func() { prune(ctx, a) })
			// Continue the runs of servers (or `ordo run`s) that died
			// mid-run, once their lease (lease_ttl) expires.
			bg.Go(func() { a.Engine.Watch(ctx, cfg.LeaseTTL/2) })
			// Upstreams saved to the file (ordo plugins add --save) are
			// mounted without a restart.
			file, _ := config.File(g.configPath, env)
			if file != "" {
				bg.Go(func() {
					err := a.FollowUpstreams(ctx, file, env, func() (*config.Config, error) { return config.Load(g.configPath, env) })
					if err != nil {
						log.Warn("config file not watched: upstreams saved to it are mounted at the next start", "file", file, "err", err)
					}
				})
			}
			startPlugins := time.AfterFunc(pluginStartPause, func() { close(gate) })
			defer startPlugins.Stop()
			if httpAddr == "" {
				log.Info("serving MCP over stdio", "version", version(), "tools", len(a.Host.List()), "llm", a.LLM != nil,
					"data_dir", cfg.DataDir, "config", file)
				err := srv.ServeStdio(ctx, g.io.In, g.io.Out)
				if ctx.Err() != nil && cmd.Context().Err() == nil {
					return nil // SIGINT or SIGTERM: a clean stop, as over HTTP
				}
				return err
			}
			ln, err := net.Listen("tcp", httpAddr)
			if err != nil {
				ce := contracts.Errorf(contracts.CodeInvalidConfig, "listen on %s: %w", httpAddr, err).With("key", "http.listen")
				if flagAddr {
					ce = ce.With("flag", "--http")
				}
				return ce
			}
			handler, err := httpHandler(a, srv, cfg) // /mcp, the event streams and the console at /ui
			if err != nil {
				return err
			}
			hs := a.HTTPServer(handler)
			hs.RegisterOnShutdown(srv.EndStreams) // event streams hold their connections open
			log.Info("serving MCP over HTTP", "addr", "http://"+ln.Addr().String()+"/mcp", "version", version(),
				"tools", len(a.Host.List()), "llm", a.LLM != nil, "tokens", len(cfg.HTTP.Tokens), "data_dir", cfg.DataDir, "config", file)
			go func() {
				<-ctx.Done()
				sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_ = hs.Shutdown(sctx)
			}()
			if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve streamable HTTP at /mcp on ADDR (bare --http: http.listen)")
	cmd.Flags().Lookup("http").NoOptDefVal = useConfigListen
	return cmd
}

// pluginStartPause is how long serve leaves the CPU to its first
// requests before it starts the plugins it listed from the contract cache
// (a call to one starts it at once).
const pluginStartPause = 250 * time.Millisecond

// compactGrace is how long serve leaves a finished run's log entry by
// entry, for clients still reading its events, before compacting it.
const compactGrace = time.Hour

// prune removes finished runs past retention, and folds the logs of the
// finished runs that remain into one snapshot each (Compact), now and then
// daily.
func prune(ctx context.Context, a *app.App) {
	keep := a.Config.Retention.Runs
	tick := time.NewTicker(24 * time.Hour)
	defer tick.Stop()
	for {
		if keep > 0 {
			n, err := a.Store.Prune(ctx, time.Now().Add(-keep))
			if err != nil && ctx.Err() == nil {
				a.Log.Error("prune runs", "err", err)
			} else if n > 0 {
				a.Log.Info("pruned finished runs", "count", n, "older_than", keep)
			}
		}
		n, err := a.Store.Compact(ctx, time.Now().Add(-compactGrace))
		if err != nil && ctx.Err() == nil {
			a.Log.Error("compact runs", "err", err)
		} else if n > 0 {
			a.Log.Info("compacted finished runs", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
