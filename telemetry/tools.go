package telemetry

import (
	"context"
	"encoding/json"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/ordo-run/ordo/host"
)

// ToolCalls is a host middleware: one GenAI span per tool call attempt
// ("execute_tool TOOL", failed when the tool answers an error) and
// ordo_tool_errors_total by tool and code. Nearest the tool
// (host.WithMiddleware), it sees each attempt the retry layer makes.
func (m *Metrics) ToolCalls() host.Middleware {
	return func(next host.Invoker) host.Invoker {
		return host.InvokerFunc(func(ctx context.Context, inv *host.Invocation) (json.RawMessage, error) {
			name := inv.Tool.Name()
			ctx, span := tracer.Start(ctx, "execute_tool "+name, trace.WithAttributes(
				semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolNameKey.String(name), attribute.Int("ordo.tool.attempt", inv.Attempt)))
			defer span.End()
			out, err := next.Invoke(ctx, inv)
			if err != nil {
				m.toolErrors.WithLabelValues(m.tools.value(name), codeLabel(err)).Inc()
				failSpan(span, err)
			}
			return out, err
		})
	}
}
