package jsonbound

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
)

// Refuse is told about a message nested too deep or too large (err says
// which, and the limit) and returns the message to pass on in its place,
// or nil to drop it. A message too large is given as its first MaxMessage
// bytes: the rest was never held.
type Refuse func(msg []byte, err error) []byte

// MaxMessage bounds one message in bytes (a line without its newline, an
// event's lines together): contracts.MaxMessageBytes.
const MaxMessage = contracts.MaxMessageBytes

// ErrTooLarge is the refusal of a message over MaxMessage.
var ErrTooLarge = contracts.Errorf(contracts.CodeInvalidInput, "message larger than %d bytes", MaxMessage).With("limit", MaxMessage)

// Lines returns r with every line nested deeper than contracts.MaxJSONDepth
// or longer than MaxMessage replaced by what refuse returns for it.
func Lines(r io.Reader, refuse Refuse) io.Reader {
	br := bufio.NewReader(r)
	return &filter{next: func() ([]byte, error) {
		line, whole, err := readLine(br, nil, MaxMessage+1) // and its newline
		if len(line) == 0 {
			return nil, err
		}
		whole = whole && len(bytes.TrimSuffix(line, []byte("\n"))) <= MaxMessage
		var bad error = ErrTooLarge
		if whole {
			bad = contracts.CheckJSONDepth(line, contracts.MaxJSONDepth)
		} else {
			line = line[:MaxMessage]
		}
		if bad != nil {
			if line = refuse(bytes.TrimSpace(line), bad); line != nil {
				line = append(line, '\n')
			}
		}
		return line, err
	}}
}

// readLine appends the next line of br (with its newline) to buf, keeping
// at most room bytes of it; whole is false when the line was longer, its
// rest read and dropped.
func readLine(br *bufio.Reader, buf []byte, room int) (line []byte, whole bool, err error) {
	start, whole := len(buf), true
	for {
		chunk, err := br.ReadSlice('\n')
		if keep := min(len(chunk), room-(len(buf)-start)); keep < len(chunk) {
			whole = false
			chunk = chunk[:keep]
		}
		buf = append(buf, chunk...)
		if err != bufio.ErrBufferFull {
			return buf, whole, err
		}
	}
}

// Events returns the server-sent-event stream r with every event whose data
// (its data lines joined, as the reader will join them) nests deeper than
// contracts.MaxJSONDepth, or whose lines exceed MaxMessage, replaced by a
// message event carrying what refuse returns for it.
func Events(r io.Reader, refuse Refuse) io.Reader {
	br := bufio.NewReader(r)
	return &filter{next: func() ([]byte, error) {
		var event, data []byte
		whole := true
		for {
			start := len(event)
			var err error
			var fits bool
			event, fits, err = readLine(br, event, MaxMessage-start)
			whole = whole && fits
			line := event[start:]
			text := bytes.TrimRight(line, "\r\n")
			if d, ok := bytes.CutPrefix(text, []byte("data:")); ok {
				if data != nil {
					data = append(data, '\n')
				}
				data = append(data, bytes.TrimPrefix(d, []byte(" "))...)
			}
			if !fits {
				event = event[:start] // the rest of the event is not kept
			}
			if len(text) > 0 && err == nil {
				continue // the event goes on
			}
			var bad error = ErrTooLarge
			if whole {
				bad = contracts.CheckJSONDepth(data, contracts.MaxJSONDepth)
			}
			if bad != nil {
				event = nil
				if msg := refuse(data, bad); msg != nil {
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

// Head reads a JSON-RPC message's id and method without decoding the rest
// (members are scanned, not built). A request has both, a notification
// only a method, a response only an id. Of a message cut short (see
// Refuse) it reads the members before the cut.
func Head(msg []byte) (id mcp.RequestId, method string) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return id, method
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return id, method
		}
		var skip json.RawMessage
		switch key {
		case "id":
			err = dec.Decode(&id)
		case "method":
			err = dec.Decode(&method)
		default:
			err = dec.Decode(&skip)
		}
		if err != nil {
			return id, method
		}
	}
	return id, method
}

// Refusal is the JSON-RPC error answering message id with err: "invalid
// request", err's text as the message and the coded error as its data.
func Refusal(id mcp.RequestId, err error) []byte {
	msg, _ := json.Marshal(mcp.NewJSONRPCError(id, mcp.INVALID_REQUEST, err.Error(), contracts.AsError(err)))
	return msg
}
