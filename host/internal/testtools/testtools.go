// Package testtools holds the tools the host tests serve from a plugin
// binary (testdata/testplugin) and in-process, so both run one handler:
// echo (shows the idempotency key), flaky (retryable failures), sleep
// (ignores its deadline), panic, and wrong (breaks its own output schema).
package testtools

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/sdk"
)

func contract(name, in, out string, timeoutMS int) contracts.Contract {
	return contracts.Contract{
		Tool: "test." + name, Service: "test", Description: "test tool " + name, RiskLevel: contracts.RiskRead,
		InputSchema: json.RawMessage(in), OutputSchema: json.RawMessage(out), TimeoutMS: timeoutMS,
	}
}

// Tools returns fresh tools; flaky counts attempts per id in memory.
func Tools() []sdk.Tool {
	var mu sync.Mutex
	seen := map[string]int{}
	return []sdk.Tool{
		sdk.Tool{
			Contract: contract("echo",
				`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`,
				`{"type":"object","properties":{"text":{"type":"string"},"key":{"type":"string"}},"required":["text","key"]}`, 0),
			Handler: func(_ context.Context, c sdk.Call) (any, error) {
				var in struct{ Text string }
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				return map[string]string{"text": in.Text, "key": c.IdempotencyKey}, nil
			},
		},
		sdk.Tool{
			Contract: contract("flaky",
				`{"type":"object","properties":{"id":{"type":"string"},"failures":{"type":"integer"}},"required":["id","failures"]}`,
				`{"type":"object","properties":{"attempts":{"type":"integer"}},"required":["attempts"]}`, 0),
			Handler: func(_ context.Context, c sdk.Call) (any, error) {
				var in struct {
					ID       string
					Failures int
				}
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				mu.Lock()
				seen[in.ID]++
				n := seen[in.ID]
				mu.Unlock()
				if n <= in.Failures {
					return nil, sdk.ToolError(true, "busy (attempt %d)", n)
				}
				return map[string]int{"attempts": n}, nil
			},
		},
		sdk.Tool{
			Contract: contract("sleep",
				`{"type":"object","properties":{"ms":{"type":"integer"}},"required":["ms"]}`,
				`{"type":"object"}`, 300),
			Handler: func(_ context.Context, c sdk.Call) (any, error) {
				var in struct{ MS int }
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				time.Sleep(time.Duration(in.MS) * time.Millisecond) // ignores the deadline on purpose
				return map[string]any{}, nil
			},
		},
		sdk.Tool{
			Contract: contract("panic", `{"type":"object"}`, `{"type":"object"}`, 0),
			Handler:  func(context.Context, sdk.Call) (any, error) { panic("boom") },
		},
		sdk.Tool{
			Contract: contract("wrong", `{"type":"object"}`,
				`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`, 0),
			Handler: func(context.Context, sdk.Call) (any, error) { return map[string]string{"n": "seven"}, nil },
		},
	}
}
