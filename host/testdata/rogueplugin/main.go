// Command rogueplugin speaks the protocol without the SDK, as a plugin in
// another language would, and misbehaves as ROGUE_MODE says: "garbage"
// answers calls with bytes that are not JSON, "broken" describes a contract
// whose schema does not compile, "v2" claims protocol version 2, "forge"
// answers calls with an error coded ROGUE_CODE (a host code, marked
// retryable), "fork" starts a child process that would outlive it (its pid
// in $ORDO_PLUGIN_DATA_DIR/child-PID) and exits on a call, "huge" answers
// calls with 17 MiB, "hugedescribe" describes a 17 MiB contract, "say" starts
// by writing "using key $ROGUE_KEY" to its stderr, after $ROGUE_PAD x's, in
// two writes cut inside the key, "leak" answers calls with $ROGUE_KEY in
// its result, or in its error when the payload says "fail". Its one tool
// is SERVICE.get, SERVICE being $ROGUE_SERVICE or "rogue".
package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-plugin"

	pb "github.com/ordo-run/ordo/plugins/proto"
	"github.com/ordo-run/ordo/plugins/sdk"
)

type rogue struct {
	pb.UnimplementedToolPluginServer
	mode, service string
}

func (r rogue) Describe(context.Context, *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	schema, description := `{"type":"object"}`, "misbehaves"
	switch r.mode {
	case "broken":
		schema = `{"type":12}`
	case "hugedescribe":
		description = strings.Repeat("x", 17<<20)
	}
	c := `{"tool":"` + r.service + `.get","service":"` + r.service + `","description":"` + description + `","risk_level":"read",` +
		`"input_schema":{"type":"object"},"output_schema":` + schema + `}`
	return &pb.DescribeResponse{Contracts: [][]byte{[]byte(c)}, PluginVersion: "rogue-1"}, nil
}

func (r rogue) Call(_ context.Context, req *pb.CallRequest) (*pb.CallResponse, error) {
	switch r.mode {
	case "leak":
		if strings.Contains(string(req.PayloadJson), "fail") {
			return &pb.CallResponse{Outcome: &pb.CallResponse_Error{Error: &pb.ToolError{Code: 6000, Message: "bad key " + os.Getenv("ROGUE_KEY")}}}, nil
		}
		return &pb.CallResponse{Outcome: &pb.CallResponse_ResultJson{ResultJson: []byte(`{"mode":"leak","said":"using key ` + os.Getenv("ROGUE_KEY") + `"}`)}}, nil
	case "forge":
		code, _ := strconv.Atoi(os.Getenv("ROGUE_CODE"))
		return &pb.CallResponse{Outcome: &pb.CallResponse_Error{Error: &pb.ToolError{Code: int32(code), Message: "forged",
			Retryable: true}}}, nil
	case "fork":
		os.Exit(3)
	case "huge":
		return &pb.CallResponse{Outcome: &pb.CallResponse_ResultJson{ResultJson: []byte(`{"s":"` + strings.Repeat("x", 17<<20) + `"}`)}}, nil
	}
	return &pb.CallResponse{Outcome: &pb.CallResponse_ResultJson{ResultJson: []byte("not json{")}}, nil
}

func (r rogue) Health(context.Context, *pb.HealthRequest) (*pb.HealthResponse, error) {
	return &pb.HealthResponse{Ok: true}, nil
}

func main() {
	mode := os.Getenv("ROGUE_MODE")
	hs := sdk.Handshake
	if mode == "v2" {
		hs.ProtocolVersion = 2
	}
	if mode == "say" {
		pad, _ := strconv.Atoi(os.Getenv("ROGUE_PAD"))
		key := os.Getenv("ROGUE_KEY")
		fmt.Fprint(os.Stderr, strings.Repeat("x", pad)+"using key "+key[:len(key)/2])
		time.Sleep(200 * time.Millisecond)
		fmt.Fprintln(os.Stderr, key[len(key)/2:])
	}
	if mode == "fork" {
		child := exec.Command("sleep", "300")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		pid := filepath.Join(os.Getenv("ORDO_PLUGIN_DATA_DIR"), "child-"+strconv.Itoa(child.Process.Pid))
		if err := os.WriteFile(pid, nil, 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: hs,
		Plugins:         plugin.PluginSet{sdk.PluginName: &sdk.GRPCPlugin{Impl: rogue{mode: mode, service: cmp.Or(os.Getenv("ROGUE_SERVICE"), "rogue")}}},
		GRPCServer:      plugin.DefaultGRPCServer,
	})
}
