package jsonbound

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
)

// Refuse is told about a message nested too deep (err says how deep it may
// be) and returns the message to pass on in its place, or nil to drop it.
type Refuse func(msg []byte, err error) []byte

// Lines returns r with every line nested deeper than contracts.MaxJSONDepth
// replaced by what refuse returns for it.
func Lines(r io.Reader, refuse Refuse) io.Reader {
	br := bufio.NewReader(r)
	return &filter{next: func() ([]byte, error) {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 {
			return nil, err
		}
		if derr := contracts.CheckJSONDepth(line, contracts.MaxJSONDepth); derr != nil {
			if line = refuse(bytes.TrimSpace(line), derr); line != nil {
				line = append(line, '\n')
			}
		}
		return line, err
	}}
}

// Events returns the server-sent-event stream r with every event whose data
// (its data lines joined, as the reader will join them) nests deeper than
// contracts.MaxJSONDepth replaced by a message event carrying what refuse
// returns for it.
func Events(r io.Reader, refuse Refuse) io.Reader {
	br := bufio.NewReader(r)
	return &filter{next: func() ([]byte, error) {
		var event, data []byte
		for {
			line, err := br.ReadBytes('\n')
			event = append(event, line...)
			text := bytes.TrimRight(line, "\r\n")
			if d, ok := bytes.CutPrefix(text, []byte("data:")); ok {
				if data != nil {
					data = append(data, '\n')
				}
				data = append(data, bytes.TrimPrefix(d, []byte(" "))...)
			}
			if len(text) > 0 && err == nil {
				continue // the event goes on
			}
			if derr := contracts.CheckJSONDepth(data, contracts.MaxJSONDepth); derr != nil {
				event = nil
				if msg := refuse(data, derr); msg != nil {
					event = append(append([]byte("event: message\ndata: "), msg...), "\n\n"...)
				}
			}
			return event, err
		}
	}}
}

// filter is a reader of the pieces next returns, each passed on whole.
type filter struct {
	next func() ([]byte, error)
	buf  []byte
	err  error
}

func (f *filter) Read(p []byte) (int, error) {
	for len(f.buf) == 0 && f.err == nil {
		f.buf, f.err = f.next()
	}
	if len(f.buf) == 0 {
		return 0, f.err
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	return n, nil
}

// Head reads a JSON-RPC message's id and method without decoding the rest:
// encoding/json skips the members a struct lacks without building them.
// A request has both, a notification only a method, a response only an id.
func Head(msg []byte) (id mcp.RequestId, method string) {
	var h struct {
		ID     mcp.RequestId `json:"id"`
		Method string        `json:"method"`
	}
	_ = json.Unmarshal(msg, &h)
	return h.ID, h.Method
}

// Refusal is the JSON-RPC error answering message id with err: "invalid
// request", err's text as the message and the coded error as its data.
func Refusal(id mcp.RequestId, err error) []byte {
	msg, _ := json.Marshal(mcp.NewJSONRPCError(id, mcp.INVALID_REQUEST, err.Error(), contracts.AsError(err)))
	return msg
}
