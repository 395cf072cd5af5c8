package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/host/mcpsource"
)

type upstreamFlags struct {
	command, url, tokenEnv, urlSecretEnv string
	save, json                           bool
}

// upstreamTool is one tool an upstream adds, as `plugins add --json` shows it.
type upstreamTool struct {
	Tool string         `json:"tool"`
	Risk contracts.Risk `json:"risk"`
}

// addUpstream connects to an upstream MCP server once, shows the tools it
// would add and prints (or, with --save, appends) its configuration entry.
func (g *globals) addUpstream(cmd *cobra.Command, name string, f upstreamFlags) error {
	cfg, log, err := g.load()
	if err != nil {
		return err
	}
	u := config.Upstream{Name: name, URL: f.url, BearerTokenEnv: f.tokenEnv, URLSecretEnv: f.urlSecretEnv}
	if f.command != "" {
		if u.Command, err = mcpsource.SplitCommand(f.command); err != nil {
			return err
		}
	}
	if u.Name == "" {
		if u.Name = upstreamName(u); u.Name == "" {
			return usageError(errors.New("no name can be made from the command or URL: give --name NAME"))
		}
	}
	probe := *cfg
	probe.Upstreams = append(append([]config.Upstream{}, cfg.Upstreams...), u)
	if err := probe.Validate(); err != nil {
		return err
	}
	if v, _ := g.io.Env(f.tokenEnv); f.tokenEnv != "" && v == "" {
		return contracts.Errorf(contracts.CodeInvalidInput, "the variable %s (--token-env) is unset or empty: export it with the upstream's bearer token", f.tokenEnv).
			With("field", "token_env")
	}
	if v, _ := g.io.Env(f.urlSecretEnv); f.urlSecretEnv != "" && v == "" {
		return contracts.Errorf(contracts.CodeInvalidInput, "the variable %s (--url-secret-env) is unset or empty: export it with the key the URL carries", f.urlSecretEnv).
			With("field", "url_secret_env")
	}
	h, err := host.New(host.WithLogger(log.With("component", "host")), host.WithDataDir(cfg.DataDir), host.WithUpstreamOpener(mcpsource.Open))
	if err != nil {
		return err
	}
	defer h.Close()
	if err := h.AddUpstream(cmd.Context(), u.Spec(g.io.Env)); err != nil {
		return err
	}
	tools := []upstreamTool{}
	for _, t := range h.List() {
		if strings.HasPrefix(t.Name(), u.Name+".") {
			tools = append(tools, upstreamTool{t.Name(), t.Contract.RiskLevel})
		}
	}
	path, _ := config.File(g.configPath, g.io.Env)
	saved := f.save && path != ""
	if saved {
		if err := appendUpstream(path, u, g.io.Env); err != nil {
			return err
		}
	}
	if f.json {
		out := map[string]any{"upstream": u.Name, "tools": tools, "entry": u}
		if saved {
			out["saved_to"] = path
		}
		return writeJSON(g.io.Out, out)
	}
	fmt.Fprintf(g.io.Out, "upstream %s answers; its tools:\n", u.Name)
	for _, t := range tools {
		fmt.Fprintf(g.io.Out, "  %-40s %s\n", t.Tool, t.Risk)
	}
	if !saved {
		entry, err := yaml.Marshal([]config.Upstream{u})
		if err != nil {
			return contracts.Errorf(contracts.CodeInternal, "encode upstream: %w", err)
		}
		_, err = fmt.Fprintf(g.io.Out, "add it to the configuration (or run again with --save):\nupstreams:\n%s", indent(entry))
		return err
	}
	_, err = fmt.Fprintf(g.io.Out, "saved to %s; an 'ordo serve' reading this file mounts it now, without a restart\n", path)
	return err
}

// upstreamName makes a source name from what the upstream runs: the
// package or program of its command (npx -y @scope/server-x → server-x),
// or its URL's host (https://mcp.example.com/mcp → mcp-example-com); ""
// when nothing usable is left.
func upstreamName(u config.Upstream) string {
	word := ""
	if len(u.Command) > 0 {
		word = u.Command[0]
		for _, w := range u.Command {
			if !strings.HasPrefix(w, "-") && !launchers[filepath.Base(w)] {
				word = w
				break
			}
		}
		if i := strings.LastIndex(word, "@"); i > 0 {
			word = word[:i] // a version: pkg@1.2.3, @scope/pkg@latest
		}
		word = filepath.Base(word)
		if ext := filepath.Ext(word); scriptExts[ext] {
			word = strings.TrimSuffix(word, ext)
		}
	} else if pu, err := url.Parse(u.URL); err == nil {
		word = pu.Hostname()
	}
	name := strings.Trim(nameChars.ReplaceAllString(strings.ToLower(word), "-"), "-_")
	name = strings.TrimLeft(name, "0123456789-_")
	return name[:min(len(name), 64)]
}

// launchers run the package or script named after them.
var launchers = map[string]bool{"npx": true, "uvx": true, "bunx": true, "pnpx": true, "pipx": true, "pnpm": true,
	"yarn": true, "bun": true, "uv": true, "dlx": true, "run": true, "tool": true, "exec": true,
	"node": true, "deno": true, "python": true, "python3": true, "go": true}

// scriptExts are dropped from a script's name (server.py → server).
var scriptExts = map[string]bool{".js": true, ".mjs": true, ".cjs": true, ".ts": true, ".py": true}

// nameChars are the characters a source name cannot hold.
var nameChars = regexp.MustCompile(`[^a-z0-9_-]+`)

// removeUpstream deletes the upstream's entry from the configuration file.
func (g *globals) removeUpstream(name string, asJSON bool) error {
	path, _ := config.File(g.configPath, g.io.Env)
	err := editUpstreams(path, g.io.Env, func(list *yaml.Node) error {
		for i, item := range list.Content {
			var u config.Upstream
			if item.Decode(&u) == nil && u.Name == name {
				list.Content = append(list.Content[:i], list.Content[i+1:]...)
				return nil
			}
		}
		return fmt.Errorf("no upstream %s in the file", name)
	})
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(g.io.Out, map[string]any{"removed": name, "kind": "upstream", "from": path})
	}
	_, err = fmt.Fprintf(g.io.Out, "removed upstream %s from %s; an 'ordo serve' reading this file unmounts it now\n", name, path)
	return err
}

// appendUpstream adds u to the file's upstreams list.
func appendUpstream(path string, u config.Upstream, env config.Env) error {
	return editUpstreams(path, env, func(list *yaml.Node) error {
		var item yaml.Node
		if err := item.Encode(u); err != nil {
			return err
		}
		list.Content = append(list.Content, &item)
		return nil
	})
}

// editUpstreams applies edit to the file's upstreams list, keeping the
// rest of the document (comments included), and writes it only if the
// result still loads.
func editUpstreams(path string, env config.Env, edit func(list *yaml.Node) error) error {
	bad := func(err error) error {
		return contracts.Errorf(contracts.CodeInvalidConfig, "save to %s: %w", path, err).With("key", "upstreams")
	}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) { // the default file is made on first save
		return bad(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return bad(err)
	}
	if doc.Kind == 0 { // an empty file
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return bad(errors.New("the document is not a mapping"))
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "upstreams" {
			list = root.Content[i+1]
		}
	}
	if list == nil || list.Kind != yaml.SequenceNode {
		if list != nil {
			return bad(errors.New("upstreams is not a list"))
		}
		list = &yaml.Node{Kind: yaml.SequenceNode}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "upstreams"}, list)
	}
	if err := edit(list); err != nil {
		return bad(err)
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return bad(err)
	}
	if _, err := config.Parse(out.Bytes(), filepath.Dir(path), env); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return bad(err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out.Bytes(), 0o600); err != nil {
		return bad(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return bad(err)
	}
	return nil
}

func indent(b []byte) string {
	lines := strings.SplitAfter(strings.TrimRight(string(b), "\n"), "\n")
	return "  " + strings.Join(lines, "  ") + "\n"
}
