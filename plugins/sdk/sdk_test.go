package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testerr"
	pb "github.com/ordo-run/ordo/plugins/proto"
)

func addTool(h Handler) Tool {
	return Tool{
		Contract: contracts.Contract{
			Tool: "math.add", Service: "math", Description: "adds", RiskLevel: contracts.RiskRead,
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"sum":{"type":"integer"}},"required":["sum"]}`),
		},
		Handler: h,
	}
}

func add(_ context.Context, c Call) (any, error) {
	var in struct{ A, B int }
	if err := c.Decode(&in); err != nil {
		return nil, err
	}
	return map[string]int{"sum": in.A + in.B}, nil
}

func TestServerCall(t *testing.T) {
	ctx := context.Background()
	s, err := NewServer(addTool(add))
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Call(ctx, "math.add", json.RawMessage(`{"a":2,"b":3}`), "")
	if err != nil || string(out) != `{"sum":5}` {
		t.Fatalf("%s %v", out, err)
	}
	_, err = s.Call(ctx, "math.sub", nil, "")
	testerr.Code(t, err, contracts.CodeUnknownTool)
	_, err = s.Call(ctx, "math.add", json.RawMessage(`{"a":"2","b":3}`), "")
	testerr.Code(t, err, contracts.CodeSchemaViolation)
	_, err = s.Call(ctx, "math.add", json.RawMessage(`[1,2]`), "")
	testerr.Code(t, err, contracts.CodeSchemaViolation)
}

func TestHandlerFailures(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name      string
		h         Handler
		code      contracts.Code
		retryable bool
	}{
		{"retryable tool error", func(context.Context, Call) (any, error) { return nil, ToolError(true, "busy") }, contracts.CodeToolFailed, true},
		{"plain error", func(context.Context, Call) (any, error) { return nil, errors.New("no") }, contracts.CodeToolFailed, false},
		{"panic", func(context.Context, Call) (any, error) { panic("boom") }, contracts.CodeToolFailed, false},
		{"bad output", func(context.Context, Call) (any, error) { return map[string]string{"sum": "x"}, nil }, contracts.CodeToolInvalidOutput, false},
		{"unmarshalable output", func(context.Context, Call) (any, error) { return func() {}, nil }, contracts.CodeToolInvalidOutput, false},
		{"deadline", func(ctx context.Context, _ Call) (any, error) { <-ctx.Done(); return nil, ctx.Err() }, contracts.CodeToolTimeout, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewServer(addTool(tc.h))
			if err != nil {
				t.Fatal(err)
			}
			cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			defer cancel()
			_, err = s.Call(cctx, "math.add", json.RawMessage(`{"a":1,"b":1}`), "")
			testerr.Code(t, err, tc.code)
			if contracts.AsError(err).Retryable != tc.retryable {
				t.Fatalf("retryable = %v", !tc.retryable)
			}
			// The error survives the wire unchanged in code and retryability.
			back := ErrorFromWire(ErrorToWire(err))
			if back.Code != tc.code || back.Retryable != tc.retryable {
				t.Fatalf("wire round trip: %+v", back)
			}
		})
	}
}

func TestNewServerRefuses(t *testing.T) {
	broken := addTool(add)
	broken.Contract.InputSchema = json.RawMessage(`{"type":12}`)
	noHandler := addTool(nil)
	for name, tools := range map[string][]Tool{
		"broken schema": {broken},
		"no handler":    {noHandler},
		"duplicate":     {addTool(add), addTool(add)},
	} {
		_, err := NewServer(tools...)
		testerr.Code(t, err, contracts.CodeInvalidContract)
		if contracts.AsError(err).Details["tool"] != "math.add" {
			t.Errorf("%s: error does not name the tool: %v", name, err)
		}
	}
}

func TestGRPCService(t *testing.T) {
	s, err := NewServer(addTool(add))
	if err != nil {
		t.Fatal(err)
	}
	g := NewGRPCService(s, "v9")
	d, err := g.Describe(context.Background(), &pb.DescribeRequest{})
	if err != nil || len(d.Contracts) != 1 || d.PluginVersion != "v9" {
		t.Fatalf("%v %v", d, err)
	}
	var c contracts.Contract
	if err := json.Unmarshal(d.Contracts[0], &c); err != nil || c.Tool != "math.add" {
		t.Fatalf("%+v %v", c, err)
	}
	past := time.Now().Add(-time.Second).UnixMilli()
	resp, err := g.Call(context.Background(), &pb.CallRequest{Tool: "math.add", PayloadJson: []byte(`{"a":1,"b":2}`), DeadlineUnixMs: past})
	if err != nil {
		t.Fatal(err)
	}
	// add ignores its context, so even a past deadline yields the result.
	if string(resp.GetResultJson()) != `{"sum":3}` {
		t.Fatalf("%v", resp)
	}
	// The host checked the payload against the schema before sending it;
	// the service only refuses what is not a JSON object.
	resp, _ = g.Call(context.Background(), &pb.CallRequest{Tool: "math.add", PayloadJson: []byte(`[1,2]`)})
	if resp.GetError().GetCode() != int32(contracts.CodeSchemaViolation) {
		t.Fatalf("%v", resp)
	}
}

// TestRunLeavesSchemasToTheHost: behind a host (the gRPC service, the
// in-process provider) the SDK checks neither schema, since the host checks
// both with the same codes; Call, for callers without a host, checks both.
func TestRunLeavesSchemasToTheHost(t *testing.T) {
	ctx := context.Background()
	bad := addTool(func(_ context.Context, c Call) (any, error) {
		var in struct{ A, B any }
		if err := c.Decode(&in); err != nil {
			return nil, err
		}
		return map[string]any{"sum": "x", "a": in.A}, nil
	})
	s, err := NewServer(bad)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx, "math.add", json.RawMessage(`{"a":"1"}`), "")
	if err != nil || string(out) != `{"a":"1","sum":"x"}` {
		t.Fatalf("Run: %s %v", out, err)
	}
	_, err = s.Call(ctx, "math.add", json.RawMessage(`{"a":"1"}`), "")
	testerr.Code(t, err, contracts.CodeSchemaViolation)
	_, err = s.Call(ctx, "math.add", json.RawMessage(`{"a":1,"b":2}`), "")
	testerr.Code(t, err, contracts.CodeToolInvalidOutput)
	_, err = s.Run(ctx, "math.add", json.RawMessage(`"a"`), "")
	testerr.Code(t, err, contracts.CodeSchemaViolation)
	g := NewGRPCService(s, "v1")
	resp, err := g.Call(ctx, &pb.CallRequest{Tool: "math.add", PayloadJson: []byte(`{"a":1,"b":2}`)})
	if err != nil || string(resp.GetResultJson()) != `{"a":1,"sum":"x"}` {
		t.Fatalf("service: %v %v", resp, err)
	}
}

// TestDecode: a call the SDK made decodes the payload as it arrived; one
// built by hand (tests) decodes Payload.
func TestDecode(t *testing.T) {
	var got struct {
		A json.Number
		B string
	}
	s, err := NewServer(addTool(func(_ context.Context, c Call) (any, error) {
		return map[string]int{"sum": 1}, c.Decode(&got)
	}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), "math.add", json.RawMessage(`{"a":12345678901234567890,"b":"x"}`), ""); err != nil {
		t.Fatal(err)
	}
	if got.A != "12345678901234567890" || got.B != "x" {
		t.Fatalf("%+v", got)
	}
	c := Call{Tool: "t", Payload: map[string]any{"a": json.Number("7"), "b": "y"}}
	if err := c.Decode(&got); err != nil || got.A != "7" || got.B != "y" {
		t.Fatalf("%+v %v", got, err)
	}
}

// FuzzServerCall: any payload bytes give a result or a coded error, never
// a panic.
func FuzzServerCall(f *testing.F) {
	for _, seed := range []string{`{"a":1,"b":2}`, `{"a":1e400,"b":2}`, `[]`, `{"a":1,"b":2} x`, ``, `null`} {
		f.Add([]byte(seed))
	}
	s, err := NewServer(addTool(add))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		out, err := s.Call(context.Background(), "math.add", payload, "")
		if err != nil {
			if contracts.CodeOf(err) == contracts.CodeInternal {
				t.Fatalf("uncoded error %v", err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid result %s", out)
		}
	})
}

// TestHostDeadline: the deadline a host sends in deadline_unix_ms is the
// handler's context deadline, and once the host ends the call after it
// passed, the handler sees DeadlineExceeded and reports a timeout; a gRPC
// deadline, when a host sets one, is left as it is.
func TestHostDeadline(t *testing.T) {
	seen := make(chan context.Context, 1)
	s, err := NewServer(addTool(func(ctx context.Context, _ Call) (any, error) {
		seen <- ctx
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	if err != nil {
		t.Fatal(err)
	}
	g := NewGRPCService(s, "v")
	at := time.Now().Add(50 * time.Millisecond)
	host, end := context.WithCancel(context.Background())
	done := make(chan *pb.CallResponse, 1)
	go func() {
		resp, _ := g.Call(host, &pb.CallRequest{Tool: "math.add", PayloadJson: []byte(`{"a":1,"b":2}`), DeadlineUnixMs: at.UnixMilli()})
		done <- resp
	}()
	ctx := <-seen
	if d, ok := ctx.Deadline(); !ok || d.UnixMilli() != at.UnixMilli() {
		t.Fatalf("handler deadline %v %v, want %v", d, ok, at)
	}
	time.Sleep(time.Until(at)) // the host ends the call once its deadline passed
	end()
	if resp := <-done; resp.GetError().GetCode() != int32(contracts.CodeToolTimeout) {
		t.Fatalf("%v, want a timeout", resp)
	}

	grpcDeadline, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	go func() {
		resp, _ := g.Call(grpcDeadline, &pb.CallRequest{Tool: "math.add", PayloadJson: []byte(`{"a":1,"b":2}`), DeadlineUnixMs: at.UnixMilli()})
		done <- resp
	}()
	ctx = <-seen
	if d, _ := ctx.Deadline(); d.Before(time.Now().Add(time.Minute)) {
		t.Fatalf("handler deadline %v, want the gRPC one", d)
	}
	cancel()
	<-done
}
