// Package doctest finds the examples in README.md and docs/*.md so that
// tests can run them: an example a test runs cannot drift from the
// behaviour it documents. Only tests import it.
//
// An example is a fenced code block. An HTML comment on the line above the
// fence (blank lines between are allowed) tells the tests what to do with
// it beyond the checks every block of its language gets:
//
//	<!-- doctest: run -->            run this shell block in a sandbox
//	<!-- doctest: skip REASON -->    do not run it (say why)
package doctest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Block is one fenced code block.
type Block struct {
	File string // relative to the repository root
	Line int    // of the opening fence
	Lang string // the fence's info string: json, sh, yaml, … or ""
	Text string
	// Directive is the doctest comment above the fence ("run", "skip …"),
	// or "".
	Directive string
}

func (b Block) String() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

// Skipped reports whether the block is marked skip.
func (b Block) Skipped() bool { return strings.HasPrefix(b.Directive, "skip") }

var directive = regexp.MustCompile(`^<!--\s*doctest:\s*(.*?)\s*-->$`)

// Blocks returns the fenced blocks of README.md and docs/*.md under root.
func Blocks(root string) ([]Block, error) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	var blocks []Block
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		bs, err := fileBlocks(f, rel)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, bs...)
	}
	return blocks, nil
}

func fileBlocks(path, rel string) ([]Block, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		blocks  []Block
		cur     *Block
		body    []string
		pending string // the last directive seen outside a block
		n       int
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
		line := sc.Text()
		fence := strings.HasPrefix(line, "```")
		switch {
		case cur != nil && fence:
			cur.Text = strings.Join(body, "\n") + "\n"
			blocks = append(blocks, *cur)
			cur, body = nil, nil
		case cur != nil:
			body = append(body, line)
		case fence:
			cur = &Block{File: rel, Line: n, Lang: strings.TrimSpace(line[3:]), Directive: pending}
			pending = ""
		case directive.MatchString(strings.TrimSpace(line)):
			pending = directive.FindStringSubmatch(strings.TrimSpace(line))[1]
		case strings.TrimSpace(line) != "":
			pending = ""
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: the code block is never closed", rel, cur.Line)
	}
	return blocks, sc.Err()
}

// commandLine starts a command in a block that mixes commands and their
// output: a "$ " prompt, or ordo/make (after VAR=value assignments) and a
// word (an error message such as "ordo 1014: …" is output).
var commandLine = regexp.MustCompile(`^(\$ |(\S+=\S+ )*(\S*/)?(ordo|make)( [a-z"'-]|$))`)

// Script is the shell a block shows: a sh or bash block whole; in a block
// of another language (a terminal session), the lines that are commands,
// without their "$ " prompt, and "" when there are none.
func (b Block) Script() string {
	switch b.Lang {
	case "sh", "bash":
		return b.Text
	case "", "console":
		var lines []string
		for _, line := range strings.Split(b.Text, "\n") {
			if commandLine.MatchString(line) {
				lines = append(lines, strings.TrimPrefix(line, "$ "))
			}
		}
		return strings.Join(lines, "\n")
	}
	return ""
}

// Of returns the blocks whose language is one of langs.
func Of(blocks []Block, langs ...string) []Block {
	var out []Block
	for _, b := range blocks {
		if slices.Contains(langs, b.Lang) {
			out = append(out, b)
		}
	}
	return out
}
