package files

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/ordo-run/ordo/plugins/internal/jsonsize"
	"github.com/ordo-run/ordo/plugins/internal/toolerr"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// maxLineText bounds the matched line text in results.
const maxLineText = 300

type searchIn struct {
	Query         string `json:"query"`
	Regexp        bool   `json:"regexp"`
	In            string `json:"in"`
	Path          string `json:"path"`
	CaseSensitive bool   `json:"case_sensitive"`
	MaxResults    int    `json:"max_results"`
}

// search walks the directory once, matching names and, for regular text
// files up to maxSearchFile bytes, their lines. Symlinks are listed by name
// but never followed.
func (p *plugin) search(ctx context.Context, call sdk.Call) (any, error) {
	in := searchIn{In: "both", Path: ".", MaxResults: 100}
	if err := call.Decode(&in); err != nil {
		return nil, err
	}
	pattern := in.Query
	if !in.Regexp {
		pattern = regexp.QuoteMeta(pattern)
	}
	if !in.CaseSensitive {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, toolerr.Refuse("query", "query %q is not a valid regular expression: %w", in.Query, err)
	}
	start, err := p.dir("path", in.Path)
	if err != nil {
		return nil, err
	}
	matches := []map[string]any{}
	scanned := 0
	truncated, size := false, 0
	add := func(path string, line int, text string) {
		text = clip(text)
		if size += jsonsize.Len(path) + jsonsize.Len(text) + entryJSON; len(matches) >= in.MaxResults || size > maxAnswerJSON {
			truncated = true
			return
		}
		matches = append(matches, map[string]any{"path": path, "line": line, "text": text})
	}
	pick := every
	if in.In == "names" { // as files.list: a huge directory is read only until enough names match
		pick = picker{
			keep: func(d fs.DirEntry) (bool, bool) {
				named := re.MatchString(d.Name())
				return named || d.IsDir(), named
			},
			room: func() int { return in.MaxResults - len(matches) },
		}
	}
	err = p.walk(ctx, start, pick, func(name string, d fs.DirEntry) error {
		if truncated {
			return fs.SkipAll
		}
		if name != start && in.In != "contents" && re.MatchString(d.Name()) {
			add(name, 0, d.Name())
		}
		if in.In == "names" || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > maxSearchFile {
			return nil // vanished or too big to scan: skipped, not an error
		}
		data, err := p.readSmall(name)
		if err != nil || bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
			return nil // unreadable or binary
		}
		scanned++
		for i, line := range strings.Split(string(data), "\n") {
			ok, err := matchLine(ctx, re, line)
			if err != nil {
				return err
			}
			if ok {
				add(name, i+1, strings.TrimSuffix(line, "\r"))
			}
		}
		return nil
	})
	if err != nil {
		return nil, walkError(in.Path, err)
	}
	return map[string]any{"matches": matches, "truncated": truncated, "files_scanned": scanned}, nil
}

// longLine is the length from which a line is matched through a reader
// that watches the context: one match over a 4 MiB line can take minutes
// (RE2 is linear in the line times the pattern, and a pattern such as
// (\w+\s*){1000} is large), and MatchString cannot be stopped.
const longLine = 64 << 10

// matchLine matches one line, observing ctx: a cancelled or timed-out call
// stops between lines and, in a long line, every few thousand runes. The
// reader costs a literal its fast search (a case-sensitive word over a
// 4 MiB line: 0.1 ms, 360 ms through the reader), so a literal is matched
// as a substring.
func matchLine(ctx context.Context, re *regexp.Regexp, line string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if len(line) < longLine {
		return re.MatchString(line), nil
	}
	if lit, complete := re.LiteralPrefix(); complete { // a case-sensitive substring: fast and cannot stall
		return strings.Contains(line, lit), nil
	}
	r := &ctxReader{ctx: ctx, r: strings.NewReader(line)}
	ok := re.MatchReader(r)
	return ok, r.err
}

// ctxReader reads runes until its context ends, then reports the end of
// the text (the match stops) and keeps the context's error.
type ctxReader struct {
	ctx context.Context
	r   *strings.Reader
	n   int
	err error
}

func (c *ctxReader) ReadRune() (rune, int, error) {
	if c.n++; c.n%4096 == 0 && c.err == nil {
		c.err = c.ctx.Err()
	}
	if c.err != nil {
		return 0, 0, io.EOF
	}
	return c.r.ReadRune()
}

// readSmall reads a file found by the walk, up to maxSearchFile bytes. It
// opens it as files.read does: a file swapped for a named pipe since the
// walk saw it is refused instead of blocking the search.
func (p *plugin) readSmall(name string) ([]byte, error) {
	f, _, err := p.root.OpenRegular("path", name, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxSearchFile))
}

// clip shortens text to maxLineText bytes without splitting a rune, and
// replaces invalid UTF-8 so the result is valid JSON text.
func clip(text string) string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	if len(text) <= maxLineText {
		return text
	}
	cut := maxLineText
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + "…"
}
