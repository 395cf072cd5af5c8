package cli

import (
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"mvdan.cc/sh/v3/syntax"

	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/internal/doctest"
	"github.com/ordo-run/ordo/internal/testbuild"
)

// TestDocCommands checks every `ordo` and `make` command shown in README.md
// and docs/ against the real command tree and Makefile: the subcommand
// exists, every flag exists, the number of arguments fits, the make target
// exists. Shell blocks are read whole; in other blocks, lines that start
// with "$ " or a command are commands and the rest is output
// (doctest.Block.Script).
func TestDocCommands(t *testing.T) {
	root, blocks := docBlocks(t)
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, b := range blocks {
		if b.Skipped() {
			continue
		}
		script := b.Script()
		if b.Lang != "sh" && b.Lang != "bash" {
			var commands []string
			for _, line := range strings.Split(script, "\n") {
				if !synopsis.MatchString(line) {
					commands = append(commands, line)
					continue
				}
				checked++
				if err := checkSynopsis(line); err != nil {
					t.Errorf("%s: %s: %v", b, line, err)
				}
			}
			script = strings.Join(commands, "\n")
		}
		for _, call := range docCalls(b, script) {
			checked++
			if err := checkCall(call, string(makefile)); err != nil {
				t.Errorf("%s: %s: %v", b, strings.Join(call, " "), err)
			}
		}
	}
	if checked < 30 {
		t.Errorf("checked only %d commands: the block parser lost some", checked)
	}
}

// TestDocConfigs loads every YAML block of README.md and docs/ as a
// configuration file, the way `ordo --config` does.
func TestDocConfigs(t *testing.T) {
	_, blocks := docBlocks(t)
	env := config.Env(func(key string) (string, bool) {
		switch key {
		case "HOME":
			return t.TempDir(), true
		}
		return "", false
	})
	for _, b := range doctest.Of(blocks, "yaml") {
		if b.Skipped() {
			continue
		}
		if _, err := config.Parse([]byte(b.Text), t.TempDir(), env); err != nil {
			t.Errorf("%s: %v", b, err)
		}
	}
}

func docBlocks(t *testing.T) (string, []doctest.Block) {
	t.Helper()
	root, err := testbuild.Root()
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := doctest.Blocks(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, blocks
}

// synopsis matches a usage line rather than a command: optional parts in
// brackets, alternatives, repetition ("ordo runs list|show [--json]"), or
// a description after a run of spaces.
var synopsis = regexp.MustCompile(`^ordo .*(\[|\||\.\.\.|\S {3,}\S)`)

// checkSynopsis checks a usage line: each word up to the first that is not
// a subcommand names one (every alternative of "a|b"), and every --flag
// before the description (after a "#" or a run of spaces) exists on one of
// the commands named.
func checkSynopsis(line string) error {
	if i := strings.Index(line, "#"); i >= 0 {
		line = line[:i]
	}
	if loc := regexp.MustCompile(`\S {3,}\S`).FindStringIndex(line); loc != nil {
		line = line[:loc[0]+1]
	}
	words := strings.Fields(line)[1:]
	cmds := []*cobra.Command{commandTree(IO{Env: func(string) (string, bool) { return "", false }})}
	for len(words) > 0 && regexp.MustCompile(`^[a-z][a-z-]*(\|[a-z][a-z-]*)*$`).MatchString(words[0]) && cmds[0].HasSubCommands() {
		var next []*cobra.Command
		for _, alt := range strings.Split(words[0], "|") {
			sub, _, err := cmds[0].Find([]string{alt})
			if err != nil || sub == cmds[0] {
				return errorString(cmds[0].CommandPath() + " has no subcommand " + alt)
			}
			next = append(next, sub)
		}
		cmds, words = next, words[1:]
	}
	for _, flag := range regexp.MustCompile(`--[a-z][a-z0-9-]*`).FindAllString(strings.Join(words, " "), -1) {
		found := false
		for _, c := range cmds {
			c.InitDefaultHelpFlag()
			c.InitDefaultVersionFlag()
			found = found || c.Flags().Lookup(flag[2:]) != nil || c.InheritedFlags().Lookup(flag[2:]) != nil
		}
		if !found {
			return errorString("no flag " + flag + " on " + cmds[0].CommandPath())
		}
	}
	return nil
}

// docCalls returns the ordo and make commands of a script as words; a
// word with expansions ($VAR, $(…)) becomes a placeholder.
func docCalls(b doctest.Block, src string) [][]string {
	if strings.TrimSpace(src) == "" {
		return nil
	}
	file, err := syntax.NewParser().Parse(strings.NewReader(src), b.String())
	if err != nil {
		return [][]string{{"<unparsable shell: " + err.Error() + ">"}}
	}
	var calls [][]string
	syntax.Walk(file, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		var words []string
		for _, w := range call.Args {
			words = append(words, literal(w))
		}
		if name := path.Base(words[0]); name == "ordo" || name == "make" {
			words[0] = name
			calls = append(calls, words)
		}
		return true
	})
	return calls
}

// literal is the word's value with quotes removed; expansions become "X".
func literal(w *syntax.Word) string {
	var s strings.Builder
	var part func(p syntax.WordPart)
	part = func(p syntax.WordPart) {
		switch p := p.(type) {
		case *syntax.Lit:
			s.WriteString(p.Value)
		case *syntax.SglQuoted:
			s.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				part(q)
			}
		default:
			s.WriteString("X")
		}
	}
	for _, p := range w.Parts {
		part(p)
	}
	return s.String()
}

func checkCall(call []string, makefile string) error {
	if strings.HasPrefix(call[0], "<") {
		return errorString(call[0])
	}
	if call[0] == "make" {
		for _, target := range call[1:] {
			if strings.HasPrefix(target, "-") || strings.Contains(target, "=") {
				continue
			}
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(target) + `:`).MatchString(makefile) {
				return errorString("no make target " + target)
			}
		}
		return nil
	}
	root := commandTree(IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Env: func(string) (string, bool) { return "", false }})
	cmd, rest, err := root.Find(call[1:])
	if err != nil {
		return err
	}
	cmd.InitDefaultHelpFlag()
	cmd.InitDefaultVersionFlag()
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	if help, _ := cmd.Flags().GetBool("help"); help {
		return nil
	}
	if !cmd.Runnable() {
		if len(cmd.Flags().Args()) > 0 {
			return errorString(cmd.CommandPath() + " has no subcommand " + cmd.Flags().Args()[0])
		}
		return nil
	}
	return cmd.ValidateArgs(cmd.Flags().Args())
}

// commandTree is the command tree as it runs: newRoot's commands and
// cobra's default completion command, which Execute adds.
func commandTree(s IO) *cobra.Command {
	root := newRoot(s)
	root.InitDefaultCompletionCmd()
	return root
}

type errorString string

func (e errorString) Error() string { return string(e) }

// TestHelpExamples checks the examples of every command's --help as the
// docs' commands are checked: the subcommand exists, every flag exists,
// the number of arguments fits. A newcomer copies them first.
func TestHelpExamples(t *testing.T) {
	root := commandTree(IO{Env: func(string) (string, bool) { return "", false }})
	checked := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, call := range docCalls(doctest.Block{File: c.CommandPath() + " --help"}, c.Example) {
			checked++
			if err := checkCall(call, ""); err != nil {
				t.Errorf("%s --help: %s: %v", c.CommandPath(), strings.Join(call, " "), err)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if checked < 60 {
		t.Errorf("checked only %d examples", checked)
	}
}
