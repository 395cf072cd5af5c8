package mcpsource

import (
	"strings"

	"github.com/ordo-run/ordo/contracts"
)

// SplitCommand splits a command line the way a POSIX shell splits words
// (single quotes, double quotes with \" \\ \$ \` escapes, backslash
// escapes, blanks), without expansion, so `ordo plugins add --mcp 'npx -y
// PKG ARGS'` can be stored as a host.UpstreamSpec.Command. An unterminated quote or
// trailing backslash is CodeInvalidInput.
func SplitCommand(line string) ([]string, error) {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
	)
	bad := func(msg string) error {
		return contracts.Errorf(contracts.CodeInvalidInput, "command %q: %s", line, msg).With("field", "command")
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, bad("unterminated single quote")
			}
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			inWord = true
			closed := false
			for i++; i < len(line); i++ {
				if line[i] == '"' {
					closed = true
					break
				}
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(line[i])
			}
			if !closed {
				return nil, bad("unterminated double quote")
			}
		case c == '\\':
			if i+1 >= len(line) {
				return nil, bad("trailing backslash")
			}
			i++
			cur.WriteByte(line[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, bad("empty")
	}
	return words, nil
}
