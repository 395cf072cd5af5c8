// Command bareplugin is the anchor of BenchmarkPluginCall: a go-plugin gRPC
// echo with nothing of Ordo's on either side but the protocol. Its Call
// answers the payload back as the result, with no decoding, no schema and
// no handler.
package main

import (
	"context"

	"github.com/hashicorp/go-plugin"

	pb "github.com/ordo-run/ordo/plugins/proto"
	"github.com/ordo-run/ordo/plugins/sdk"
)

type echo struct {
	pb.UnimplementedToolPluginServer
}

func (echo) Call(_ context.Context, req *pb.CallRequest) (*pb.CallResponse, error) {
	return &pb.CallResponse{Outcome: &pb.CallResponse_ResultJson{ResultJson: req.PayloadJson}}, nil
}

func main() {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: sdk.Handshake,
		Plugins:         plugin.PluginSet{sdk.PluginName: &sdk.GRPCPlugin{Impl: echo{}}},
		GRPCServer:      plugin.DefaultGRPCServer,
	})
}
