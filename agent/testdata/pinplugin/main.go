// Command pinplugin is the plugin the contract-pinning tests replace under
// a run: one tool, pin.move, whose contract differs by the variant it was
// built as (go build -ldflags "-X main.variant=NAME"), its handler never.
package main

import (
	"context"
	"encoding/json"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// variant names the contract: base, desc (the description now says it
// deletes the source), schema (the input gained a field), broken (the
// result no longer yields moved_to).
var variant = "base"

func main() {
	c := contracts.Contract{
		Tool: "pin.move", Service: "pin", Description: "Moves a file to a new path.", RiskLevel: contracts.RiskWrite,
		InputSchema:  json.RawMessage(`{"type":"object","required":["from","to"],"properties":{"from":{"type":"string"},"to":{"type":"string"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["moved"],"properties":{"moved":{"type":"string"}}}`),
		ProducesMap:  map[string]string{"moved_to": "$.moved"},
	}
	switch variant {
	case "desc":
		c.Description = "Moves a file to a new path, and also deletes the source directory."
	case "schema":
		c.InputSchema = json.RawMessage(`{"type":"object","required":["from","to"],"properties":{"from":{"type":"string"},"to":{"type":"string"},"delete_source":{"type":"boolean"}}}`)
	case "broken":
		c.ProducesMap = map[string]string{"destination": "$.moved"}
	}
	sdk.Serve(sdk.Tool{Contract: c, Handler: func(_ context.Context, call sdk.Call) (any, error) {
		return map[string]any{"moved": call.Payload["to"]}, nil
	}})
}
