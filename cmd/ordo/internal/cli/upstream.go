package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/host/mcpsource"
)

type upstreamFlags struct {
	command, url, tokenEnv string
	save                   bool
}

// addUpstream connects to an upstream MCP server once, shows the tools it
// would add and prints (or, with --save, appends) its configuration entry.
func (g *globals) addUpstream(cmd *cobra.Command, name string, f upstreamFlags) error {
	cfg, log, err := g.load()
	if err != nil {
		return err
	}
	u := config.Upstream{Name: name, URL: f.url, BearerTokenEnv: f.tokenEnv}
	if f.command != "" {
		if u.Command, err = mcpsource.SplitCommand(f.command); err != nil {
			return err
		}
	}
	probe := *cfg
	probe.Upstreams = append(append([]config.Upstream{}, cfg.Upstreams...), u)
	if err := probe.Validate(); err != nil {
		return err
	}
	h, err := host.New(host.WithLogger(log.With("component", "host")), host.WithDataDir(cfg.DataDir))
	if err != nil {
		return err
	}
	defer h.Close()
	if err := h.AddUpstream(cmd.Context(), u.Spec(g.io.Env)); err != nil {
		return err
	}
	fmt.Fprintf(g.io.Out, "upstream %s answers; its tools:\n", name)
	for _, t := range h.List() {
		if strings.HasPrefix(t.Name(), name+".") {
			fmt.Fprintf(g.io.Out, "  %-40s %s\n", t.Name(), t.Contract.RiskLevel)
		}
	}
	entry, err := yaml.Marshal([]config.Upstream{u})
	if err != nil {
		return contracts.Errorf(contracts.CodeInternal, "encode upstream: %w", err)
	}
	path := g.configFile()
	if !f.save || path == "" {
		fmt.Fprintf(g.io.Out, "add it to the configuration (or run again with --save and --config FILE):\nupstreams:\n%s", indent(entry))
		return nil
	}
	if err := appendUpstream(path, u, g.io.Env); err != nil {
		return err
	}
	_, err = fmt.Fprintf(g.io.Out, "saved to %s; restart 'ordo serve' to mount it\n", path)
	return err
}

// configFile is the configuration file in use (--config or ORDO_CONFIG),
// or "" when there is none.
func (g *globals) configFile() string {
	if g.configPath != "" {
		return g.configPath
	}
	path, _ := g.io.Env(config.EnvConfig)
	return path
}

// removeUpstream deletes the upstream's entry from the configuration file.
func (g *globals) removeUpstream(name string) error {
	path := g.configFile()
	if path == "" {
		return contracts.Errorf(contracts.CodeInvalidInput, "%s is an upstream declared in the configuration; give --config FILE to remove it there", name).
			With("field", "name")
	}
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
	_, err = fmt.Fprintf(g.io.Out, "removed upstream %s from %s; restart 'ordo serve' (or use the remove_plugin MCP tool) to unmount it\n", name, path)
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
	if err != nil {
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
