package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/contracts"
)

// configDebounce is how long the configuration file's directory must be
// quiet before the file is read again, so an editor's save is read whole.
const configDebounce = 250 * time.Millisecond

// FollowUpstreams keeps the mounted upstreams in step with the upstreams
// of the configuration file at path until ctx ends: an entry that appears
// is mounted, one that goes is unmounted, one that changes is mounted
// anew. This is how `ordo plugins add --mcp … --save` reaches a running
// server. load reads the configuration as the server did at start. Other
// keys take effect at the next start. The file need not exist yet: its
// directory is watched (created if missing), which also sees the file
// replaced by a rename, the way Ordo and most editors save.
func (a *App) FollowUpstreams(ctx context.Context, path string, env config.Env, load func() (*config.Config, error)) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return contracts.Errorf(contracts.CodeInvalidConfig, "watch the config file: %w", err).With("key", "config").With("file", path)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return contracts.Errorf(contracts.CodeInternal, "watch the config file: %w", err)
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		return contracts.Errorf(contracts.CodeInvalidConfig, "watch the config file: %w", err).With("key", "config").With("file", path)
	}
	mounted := map[string]config.Upstream{}
	for _, u := range a.Config.Upstreams {
		mounted[u.Name] = u
	}
	last, _ := os.ReadFile(path)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-w.Events:
			if !ok {
				return nil
			}
			timer.Reset(configDebounce)
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			a.Log.Error("config file watch", "file", path, "err", err)
		case <-timer.C:
			data, _ := os.ReadFile(path)
			if bytes.Equal(data, last) {
				continue // another file in the directory, or no change
			}
			last = data
			cfg, err := load()
			if err != nil {
				a.Log.Error("config file changed but does not load; upstreams unchanged", "file", path, "err", err)
				continue
			}
			a.syncUpstreams(ctx, mounted, cfg.Upstreams, env)
		}
	}
}

// syncUpstreams makes the upstreams mounted from the file (mounted, kept
// up to date) the ones the file now lists.
func (a *App) syncUpstreams(ctx context.Context, mounted map[string]config.Upstream, want []config.Upstream, env config.Env) {
	wanted := map[string]config.Upstream{}
	for _, u := range want {
		wanted[u.Name] = u
	}
	for name, u := range mounted {
		if w, ok := wanted[name]; ok && reflect.DeepEqual(w, u) {
			continue
		}
		delete(mounted, name)
		if err := a.Host.RemoveUpstream(ctx, name); err != nil {
			a.Log.Debug("upstream left the config file; it was not mounted", "upstream", name, "err", err)
			continue
		}
		a.Log.Info("upstream removed from the config file: unmounted", "upstream", name)
	}
	for _, u := range want {
		if _, ok := mounted[u.Name]; ok {
			continue
		}
		if err := a.Host.AddUpstream(ctx, upstreamSpec(u, env, a.Log)); err != nil {
			a.Log.Error("upstream in the config file not mounted; fix it and save the file again", "upstream", u.Name, "err", err)
			continue
		}
		mounted[u.Name] = u
		a.Log.Info("upstream added to the config file: mounted", "upstream", u.Name)
	}
}
