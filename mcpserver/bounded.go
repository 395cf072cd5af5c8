package mcpserver

import (
	"io"
	"sync"

	"github.com/ordo-run/ordo/internal/jsonbound"
)

// boundStdio keeps messages nested deeper than contracts.MaxJSONDepth from
// mcp-go's stdio server, which decodes each line as soon as it reads it. A
// refused request is answered with the coded error (JSON-RPC "invalid
// request"); a refused notification or response is dropped. The returned
// writer is what the server must write to: refusals and mcp-go's own
// messages then never interleave.
func (s *Server) boundStdio(in io.Reader, out io.Writer) (io.Reader, io.Writer) {
	w := &lockedWriter{w: out}
	return jsonbound.Lines(in, func(msg []byte, err error) []byte {
		id, method := jsonbound.Head(msg)
		s.log.Warn("refused an MCP message", "transport", "stdio", "method", method, "error", err)
		if notification, response := method != "" && id.IsNil(), method == "" && !id.IsNil(); !notification && !response {
			_, _ = w.Write(append(jsonbound.Refusal(id, err), '\n'))
		}
		return nil
	}), w
}

// lockedWriter passes each Write on whole, one at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
