// Command rogueplugin speaks the protocol without the SDK, as a plugin in
// another language would, and misbehaves as ROGUE_MODE says: "garbage"
// answers calls with bytes that are not JSON, "broken" describes a contract
// whose schema does not compile, "v2" claims protocol version 2.
package main

import (
	"context"
	"os"

	"github.com/hashicorp/go-plugin"

	pb "github.com/ordo-run/ordo/plugins/proto"
	"github.com/ordo-run/ordo/plugins/sdk"
)

type rogue struct {
	pb.UnimplementedToolPluginServer
	mode string
}

func (r rogue) Describe(context.Context, *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	schema := `{"type":"object"}`
	if r.mode == "broken" {
		schema = `{"type":12}`
	}
	c := `{"tool":"rogue.get","service":"rogue","description":"misbehaves","risk_level":"read",` +
		`"input_schema":{"type":"object"},"output_schema":` + schema + `}`
	return &pb.DescribeResponse{Contracts: [][]byte{[]byte(c)}, PluginVersion: "rogue-1"}, nil
}

func (r rogue) Call(context.Context, *pb.CallRequest) (*pb.CallResponse, error) {
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
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: hs,
		Plugins:         plugin.PluginSet{sdk.PluginName: &sdk.GRPCPlugin{Impl: rogue{mode: mode}}},
		GRPCServer:      plugin.DefaultGRPCServer,
	})
}
