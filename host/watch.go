package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/ordo-run/ordo/contracts"
)

// The plugins directory holds one executable per plugin, named NAME or
// ordo-plugin-NAME, and optionally beside it a manifest FILE.json
// (Manifest) or FILE.sha256 (sha256sum output or a bare hex digest),
// where FILE is the executable's file name. Dotfiles are ignored.
const pluginPrefix = "ordo-plugin-"

// Manifest is the optional FILE.json beside a plugin binary.
type Manifest struct {
	SHA256 string            `json:"sha256"`
	Env    map[string]string `json:"env,omitempty"`
	Args   []string          `json:"args,omitempty"`
}

// startWatch loads the directory once, then follows it.
func (h *Host) startWatch() error {
	dir := h.opts.pluginsDir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return contracts.Errorf(contracts.CodeInvalidConfig, "plugins dir: %w", err).With("field", "plugins_dir")
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return contracts.Errorf(contracts.CodeInternal, "watch plugins dir: %w", err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return contracts.Errorf(contracts.CodeInvalidConfig, "watch plugins dir %s: %w", dir, err).With("field", "plugins_dir")
	}
	ctx, stop := context.WithCancel(context.Background())
	h.watchStop, h.watchDone = stop, make(chan struct{})
	h.syncDir(ctx)
	go h.watch(ctx, w)
	return nil
}

// watch rescans the directory once events have been quiet for the
// debounce period, so a binary being copied is read when complete.
func (h *Host) watch(ctx context.Context, w *fsnotify.Watcher) {
	defer close(h.watchDone)
	defer w.Close()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			h.log.Debug("plugins dir event", "event", ev.String())
			timer.Reset(h.opts.debounce)
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			h.log.Error("plugins dir watch", "err", err)
			timer.Reset(h.opts.debounce)
		case <-timer.C:
			h.syncDir(ctx)
		}
	}
}

// dirPlugin is what the directory says one plugin should be.
type dirPlugin struct {
	spec  PluginSpec
	stamp string // changes whenever the binary or its manifest changes
	err   error  // a broken manifest
}

// scanDir reads the plugins directory.
func (h *Host) scanDir() map[string]dirPlugin {
	dir := h.opts.pluginsDir
	entries, err := os.ReadDir(dir)
	if err != nil {
		h.log.Error("read plugins dir", "dir", dir, "err", err)
		return nil
	}
	out := map[string]dirPlugin{}
	for _, e := range entries {
		file := e.Name()
		if strings.HasPrefix(file, ".") || strings.HasSuffix(file, ".json") || strings.HasSuffix(file, ".sha256") {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
			continue
		}
		name := strings.TrimPrefix(file, pluginPrefix)
		path := filepath.Join(dir, file)
		dp := dirPlugin{spec: PluginSpec{Name: name, Path: path}}
		binSum, err := h.sums.sha256(path)
		if err != nil {
			continue // vanished or became unreadable since ReadDir
		}
		manifest, mraw, err := readManifest(path)
		if err != nil {
			dp.err = err
		} else if manifest != nil {
			dp.spec.SHA256, dp.spec.Env, dp.spec.Args = manifest.SHA256, manifest.Env, manifest.Args
		}
		stamp := sha256.Sum256(append([]byte(binSum), mraw...))
		dp.stamp = hex.EncodeToString(stamp[:])
		if prev, dup := out[name]; dup {
			// NAME and ordo-plugin-NAME both exist: refuse both rather than guess.
			prev.err = contracts.Errorf(contracts.CodePluginRefused, "two binaries for plugin %q in %s", name, dir).With("name", name)
			out[name] = prev
			continue
		}
		out[name] = dp
	}
	return out
}

// readManifest reads FILE.json or FILE.sha256 beside the binary; both
// absent is (nil, nil, nil). raw is the manifest's bytes, for the stamp.
func readManifest(bin string) (*Manifest, []byte, error) {
	if raw, err := os.ReadFile(bin + ".json"); err == nil {
		m, err := ParseManifest(raw)
		if err != nil {
			return nil, nil, contracts.Errorf(contracts.CodeInvalidConfig, "manifest %s.json: %w", filepath.Base(bin), err).
				With("file", filepath.Base(bin)+".json")
		}
		return m, raw, nil
	}
	if raw, err := os.ReadFile(bin + ".sha256"); err == nil {
		fields := strings.Fields(string(raw))
		if len(fields) == 0 {
			return nil, nil, contracts.Errorf(contracts.CodeInvalidConfig, "%s.sha256 is empty", filepath.Base(bin)).
				With("file", filepath.Base(bin)+".sha256")
		}
		return &Manifest{SHA256: fields[0]}, raw, nil
	}
	return nil, nil, nil
}

// ParseManifest parses a plugin manifest; unknown fields are refused so a
// typo cannot silently drop a checksum.
func ParseManifest(raw []byte) (*Manifest, error) {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "manifest: %w", err)
	}
	if dec.More() {
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "manifest: trailing data after the object")
	}
	return &m, nil
}

// syncDir makes the running directory plugins match the directory:
// new ones are added, vanished ones removed, changed ones replaced.
func (h *Host) syncDir(ctx context.Context) {
	want := h.scanDir()
	if want == nil {
		return
	}
	h.mu.Lock()
	have := map[string]*source{}
	for n, s := range h.sources {
		if s.origin == originDir {
			have[n] = s
		}
	}
	for n, info := range h.refused {
		if info.Origin == originDir {
			if _, still := want[n]; !still {
				delete(h.refused, n)
			}
		}
	}
	h.mu.Unlock()
	for name, s := range have {
		if dp, ok := want[name]; !ok || dp.stamp != s.stamp {
			h.log.Info("plugin removed from plugins dir or changed", "plugin", name)
			if err := h.RemoveSource(ctx, name); err != nil {
				h.log.Error("remove plugin", "plugin", name, "err", err)
			}
			continue
		}
		delete(want, name) // unchanged and running
	}
	for name, dp := range want {
		h.mu.Lock()
		refused, wasRefused := h.refused[name]
		_, taken := h.sources[name]
		h.mu.Unlock()
		if taken || (wasRefused && refused.stamp == dp.stamp) {
			continue // a config plugin of that name, or refused before and unchanged
		}
		err := dp.err
		if err == nil {
			src := newSource(name, kindPlugin, originDir)
			src.stamp = dp.stamp
			err = h.admitPlugin(ctx, src, dp.spec)
		}
		h.mu.Lock()
		if err != nil {
			h.refused[name] = SourceInfo{Name: name, Kind: kindPlugin, Origin: originDir, Path: dp.spec.Path,
				SHA256: dp.spec.SHA256, State: StateRefused, Error: err.Error(), stamp: dp.stamp}
		} else {
			delete(h.refused, name)
		}
		h.mu.Unlock()
		if err != nil {
			h.log.Error("plugin refused", "plugin", name, "err", err)
		}
	}
}
