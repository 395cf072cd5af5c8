package host

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// Invocation is one tool call travelling down the middleware chain.
type Invocation struct {
	Tool           *contracts.Tool
	Payload        json.RawMessage
	IdempotencyKey string
	// Attempt counts from 1; Retry sets it for the layers below.
	Attempt int
	// Retries, when set, is this call's own retry policy (an action's
	// retries, WithRetries) in place of the host's.
	Retries *RetryPolicy
}

// CallOption adjusts one call (Host.Call).
type CallOption func(*Invocation)

// WithRetries makes p the retry policy of one call, in place of the
// host's (WithRetry): the engine passes an action's own retries this way,
// so tool calls are retried in one layer, here, under one rule (Retryable
// errors only, one idempotency key).
func WithRetries(p RetryPolicy) CallOption { return func(inv *Invocation) { inv.Retries = &p } }

// Invoker runs an invocation. It is the one method every layer of tool
// invocation implements, as http.Handler is for net/http.
type Invoker interface {
	Invoke(ctx context.Context, inv *Invocation) (json.RawMessage, error)
}

// InvokerFunc adapts a function to Invoker.
type InvokerFunc func(ctx context.Context, inv *Invocation) (json.RawMessage, error)

// Invoke calls f.
func (f InvokerFunc) Invoke(ctx context.Context, inv *Invocation) (json.RawMessage, error) {
	return f(ctx, inv)
}

// Middleware wraps an Invoker with one concern.
type Middleware func(Invoker) Invoker

// Chain wraps final in mw; mw[0] is the outermost layer.
func Chain(final Invoker, mw ...Middleware) Invoker {
	for i := len(mw) - 1; i >= 0; i-- {
		final = mw[i](final)
	}
	return final
}

// ValidateInput refuses a payload that is not JSON or breaks the input
// schema (CodeSchemaViolation) before any tool sees it. A payload the
// contract's fast path reads as surely valid is not decoded (see
// contracts.Tool.InputJSONValid).
func ValidateInput() Middleware {
	return func(next Invoker) Invoker {
		return InvokerFunc(func(ctx context.Context, inv *Invocation) (json.RawMessage, error) {
			if inv.Tool.InputJSONValid(inv.Payload) {
				return next.Invoke(ctx, inv)
			}
			v, err := contracts.DecodeJSON(inv.Payload)
			if err != nil {
				return nil, contracts.Errorf(contracts.CodeSchemaViolation, "payload of %s: %w", inv.Tool.Name(), err).
					With("tool", inv.Tool.Name())
			}
			if err := inv.Tool.ValidateInput(v); err != nil {
				return nil, err
			}
			return next.Invoke(ctx, inv)
		})
	}
}

// ValidateOutput refuses a result that is not JSON or breaks the output
// schema (CodeToolInvalidOutput), whatever the tool claims. Like
// ValidateInput, it decodes only a result the fast path is not sure of.
func ValidateOutput() Middleware {
	return func(next Invoker) Invoker {
		return InvokerFunc(func(ctx context.Context, inv *Invocation) (json.RawMessage, error) {
			out, err := next.Invoke(ctx, inv)
			if err != nil {
				return nil, err
			}
			if inv.Tool.OutputJSONValid(out) {
				return out, nil
			}
			v, err := contracts.DecodeJSON(out)
			if err != nil {
				return nil, contracts.Errorf(contracts.CodeToolInvalidOutput, "result of %s is not JSON: %w", inv.Tool.Name(), err).
					With("tool", inv.Tool.Name())
			}
			if err := inv.Tool.ValidateOutput(v); err != nil {
				return nil, err
			}
			return out, nil
		})
	}
}

// Conceal hides, in a tool's answer, the values of the payload's secret
// fields that the tool repeats (an upstream's "wrong password hunter2", a
// result echoing its request): contracts.Concealer. Nearest the tool, it
// comes before every layer that records, traces or logs an answer, and
// before the engine, which keeps what it gets in the run's log and shows
// it to the re-planner.
func Conceal() Middleware {
	return func(next Invoker) Invoker {
		return InvokerFunc(func(ctx context.Context, inv *Invocation) (json.RawMessage, error) {
			out, err := next.Invoke(ctx, inv)
			c := contracts.NewConcealer(inv.Payload, inv.Tool.Contract.SecretFields)
			return c.Result(out), c.Error(err)
		})
	}
}

// Timeout bounds each attempt by the contract's timeout_ms (def when
// unset); a shorter ctx deadline (an action's timeout_ms) wins. An attempt
// that runs out of time fails with CodeToolTimeout naming the deadline that
// fired, unless it never reached the tool (it waited for a restarting
// plugin): that stays CodeToolUnavailable.
func Timeout(def time.Duration) Middleware {
	return func(next Invoker) Invoker {
		dl := newDeadlines()
		return InvokerFunc(func(ctx context.Context, inv *Invocation) (json.RawMessage, error) {
			d := def
			if ms := inv.Tool.Contract.TimeoutMS; ms > 0 {
				d = time.Duration(ms) * time.Millisecond
			}
			var actx context.Context
			var cancel context.CancelFunc
			if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d {
				d = time.Until(deadline).Round(time.Millisecond)
				actx, cancel = context.WithCancel(ctx) // ctx's own deadline ends the attempt
			} else {
				actx, cancel = dl.withDeadline(ctx, time.Now().Add(d))
			}
			defer cancel()
			out, err := next.Invoke(actx, inv)
			// A plugin's own clock may report the deadline a moment before
			// this process's timer marks actx done (timers fire late under
			// load): a timeout after our deadline passed is ours too.
			end, _ := actx.Deadline()
			if err != nil && (errors.Is(actx.Err(), context.DeadlineExceeded) ||
				contracts.CodeOf(err) == contracts.CodeToolTimeout && !time.Now().Before(end)) {
				// Already said by an inner layer (a retry's attempt), or it
				// never reached the tool.
				if ce := contracts.AsError(err); ce.Code == contracts.CodeToolUnavailable || ce.Details["timeout_ms"] != nil {
					return nil, err
				}
				return nil, contracts.Errorf(contracts.CodeToolTimeout, "%s did not answer within %s: %w", inv.Tool.Name(), d, err).
					With("tool", inv.Tool.Name()).With("timeout_ms", d.Milliseconds())
			}
			return out, err
		})
	}
}

// RetryPolicy bounds retries of errors marked Retryable.
type RetryPolicy struct {
	MaxAttempts int           // including the first; < 1 means 1
	BaseDelay   time.Duration // before the second attempt; doubles each time
	MaxDelay    time.Duration // cap on one delay
}

// DefaultRetryPolicy is three attempts, 100 ms then 200 ms apart (jittered).
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 3, BaseDelay: 100 * time.Millisecond, MaxDelay: 2 * time.Second}

// Retry repeats an attempt whose error is Retryable, with exponential
// backoff and jitter (each delay uniform in [d/2, d]), until it succeeds,
// the attempts are spent or ctx ends. Other errors return at once. Every
// attempt carries the same idempotency key. A call's own policy
// (WithRetries) replaces p for that call.
//
// Retryable is the one definition of what may be retried: an error is
// marked so only where repeating the call is known to be safe and useful —
// the call never reached the tool (CodeToolUnavailable), the plugin died
// during a call to an idempotent tool or an idempotent_with_key tool given
// a key (CodeToolCrashed), or the tool itself said so (sdk.ToolError(true,
// ...), an upstream MCP dial failure). Timeouts, other crashes, schema
// violations and invalid results are final.
func Retry(p RetryPolicy) Middleware {
	return func(next Invoker) Invoker {
		return InvokerFunc(func(ctx context.Context, inv *Invocation) (json.RawMessage, error) {
			p := p
			if inv.Retries != nil {
				p = *inv.Retries
			}
			delay := p.BaseDelay
			for attempt := 1; ; attempt++ {
				inv.Attempt = attempt
				out, err := next.Invoke(ctx, inv)
				if err == nil {
					return out, nil
				}
				ce := contracts.AsError(err)
				if !ce.Retryable || attempt >= p.MaxAttempts {
					if attempt > 1 {
						ce = ce.With("attempts", attempt)
					}
					return nil, ce
				}
				wait := time.Duration(0)
				if delay > 0 {
					wait = delay/2 + rand.N(delay/2+1)
				}
				select {
				case <-time.After(wait):
				case <-ctx.Done():
					return nil, ce.With("attempts", attempt)
				}
				delay = min(delay*2, p.MaxDelay)
			}
		})
	}
}
