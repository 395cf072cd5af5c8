// Command plugin-hello is a complete Ordo plugin: one tool, hello.greet,
// served over the plugin protocol by the SDK. Build and install it with
//
//	go build -o bin/plugin-hello ./examples/plugin-hello
//	ordo plugins add bin/plugin-hello --name hello
package main

import (
	"context"
	"encoding/json"
	"os"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/sdk"
)

func main() {
	greeting := os.Getenv("HELLO_GREETING") // set per plugin in ordo.yaml's plugins[].env
	if greeting == "" {
		greeting = "Hello"
	}
	sdk.Serve(sdk.Tool{
		Contract: contracts.Contract{
			Tool: "hello.greet", Service: "hello", RiskLevel: contracts.RiskRead, Idempotent: true,
			Description:  "Greet someone by name.",
			InputSchema:  json.RawMessage(`{"type":"object","required":["name"],"properties":{"name":{"type":"string","minLength":1}}}`),
			OutputSchema: json.RawMessage(`{"type":"object","required":["greeting"],"properties":{"greeting":{"type":"string"}}}`),
			ProducesMap:  map[string]string{"greeting": "$.greeting"},
		},
		Handler: func(_ context.Context, call sdk.Call) (any, error) {
			var in struct{ Name string }
			if err := call.Decode(&in); err != nil {
				return nil, err
			}
			return map[string]string{"greeting": greeting + ", " + in.Name + "!"}, nil
		},
	})
}
