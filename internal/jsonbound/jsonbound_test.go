package jsonbound

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
)

var deep = strings.Repeat("[", contracts.MaxJSONDepth+1) + strings.Repeat("]", contracts.MaxJSONDepth+1)

// refusal answers a request with the coded error and drops anything else.
func refusal(msg []byte, err error) []byte {
	if id, method := Head(msg); method != "" && !id.IsNil() {
		return Refusal(id, err)
	}
	return nil
}

func TestLines(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" +
		`{"jsonrpc":"2.0","method":"tools/call","params":{"x":` + deep + `},"id":"a"}` + "\r\n" +
		`{"jsonrpc":"2.0","method":"notifications/x","params":` + deep + `}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"ping"}` // no newline at the end
	out, err := io.ReadAll(Lines(strings.NewReader(in), refusal))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(out), "\n")
	if len(lines) != 3 || lines[0] != `{"jsonrpc":"2.0","id":1,"method":"ping"}` || lines[2] != `{"jsonrpc":"2.0","id":2,"method":"ping"}` {
		t.Fatalf("%q", out)
	}
	var answer struct {
		ID    string
		Error struct {
			Code int
			Data contracts.Error
		}
	}
	if err := json.Unmarshal([]byte(lines[1]), &answer); err != nil || answer.ID != "a" || answer.Error.Code != -32600 ||
		answer.Error.Data.Code != contracts.CodeJSONTooDeep || answer.Error.Data.Details["limit"] != float64(64) {
		t.Fatalf("%s: %v", lines[1], err)
	}
}

// TestEvents: an event is judged on its data lines joined, so a message
// split over many shallow lines is refused too.
func TestEvents(t *testing.T) {
	split := strings.Repeat("data: [\n", contracts.MaxJSONDepth+1) + "data: " + strings.Repeat("]", contracts.MaxJSONDepth+1) + "\n"
	in := ": keep-alive\n\n" +
		"event: message\r\nid: 7\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\r\n" +
		"event: message\n" + split + "\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":" + deep + "}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}" // cut off at the end
	respond := func(msg []byte, err error) []byte {
		if id, _ := Head(msg); !id.IsNil() {
			return Refusal(id, err)
		}
		return nil
	}
	out, err := io.ReadAll(Events(strings.NewReader(in), respond))
	if err != nil {
		t.Fatal(err)
	}
	want := ": keep-alive\n\n" +
		"event: message\r\nid: 7\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\r\n" +
		"event: message\ndata: " + string(Refusal(mustID(t, `{"id":3}`), contracts.CheckJSONDepth([]byte(`{"jsonrpc":"2.0","id":3,"result":`+deep+"}"), 64))) + "\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}"
	if string(out) != want {
		t.Fatalf("got\n%q\nwant\n%q", out, want)
	}
}

// TestTooLarge: a message over MaxMessage is refused, given to refuse cut
// at MaxMessage with its id still readable, and the stream goes on after
// it; a message of exactly MaxMessage passes.
func TestTooLarge(t *testing.T) {
	msg := func(id, size int) string {
		head := `{"jsonrpc":"2.0","id":` + fmt.Sprint(id) + `,"result":"`
		return head + strings.Repeat("x", size-len(head)-2) + `"}`
	}
	respond := func(msg []byte, err error) []byte {
		if len(msg) > MaxMessage || contracts.AsError(err).Details["limit"] != MaxMessage {
			t.Fatalf("refused %d bytes with %v", len(msg), err)
		}
		return Refusal(mustID(t, string(msg)), err)
	}
	refused := string(Refusal(mcp.NewRequestId(int64(1)), ErrTooLarge))
	ok := msg(2, MaxMessage)
	out, err := io.ReadAll(Lines(strings.NewReader(msg(1, MaxMessage+1)+"\n"+ok+"\n"), respond))
	if err != nil || string(out) != refused+"\n"+ok+"\n" {
		t.Fatalf("lines: %.200q, %v", out, err)
	}
	fits := "event: message\ndata: " + msg(2, MaxMessage-len("event: message\ndata: \n\n")) + "\n\n" // the event's lines are the bound
	in := "event: message\ndata: " + msg(1, MaxMessage) + "\n\n" + fits
	out, err = io.ReadAll(Events(strings.NewReader(in), respond))
	want := "event: message\ndata: " + refused + "\n\n" + fits
	if err != nil || string(out) != want {
		t.Fatalf("events: %.200q, %v", out, err)
	}
}

func mustID(t *testing.T, msg string) (id mcp.RequestId) {
	id, _ = Head([]byte(msg))
	if id.IsNil() {
		t.Fatalf("no id in %s", msg)
	}
	return id
}

// TestReadErrorsPassThrough: the error of the underlying reader reaches the
// caller after the data before it.
func TestReadErrorsPassThrough(t *testing.T) {
	boom := errors.New("boom")
	r := Lines(io.MultiReader(strings.NewReader("{}\n{"), errReader{boom}), refusal)
	out, err := io.ReadAll(r)
	if string(out) != "{}\n{" || !errors.Is(err, boom) {
		t.Fatalf("%q, %v", out, err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// FuzzEvents: what is not refused passes unchanged, byte for byte, and what
// is refused is too deep; the same for lines.
func FuzzEvents(f *testing.F) {
	f.Add([]byte("event: message\ndata: [[1]]\n\ndata: {}\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		for name, bound := range map[string]func(io.Reader, Refuse) io.Reader{"events": Events, "lines": Lines} {
			refused := 0
			out, err := io.ReadAll(bound(bytes.NewReader(in), func(msg []byte, err error) []byte {
				if contracts.CodeOf(err) != contracts.CodeJSONTooDeep && err != ErrTooLarge {
					t.Fatalf("%s: refused with %v", name, err)
				}
				refused++
				return nil
			}))
			if err != nil {
				t.Fatal(err)
			}
			if refused == 0 && !bytes.Equal(out, in) {
				t.Fatalf("%s: %q became %q", name, in, out)
			}
			if refused > 0 && len(out) >= len(in) {
				t.Fatalf("%s: %d refused but nothing dropped", name, refused)
			}
		}
	})
}
