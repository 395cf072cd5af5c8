package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/agent"
)

// progressSink turns the engine's events for one request into
// notifications on that request: notifications/progress when the caller
// sent a progress token (progress counts finished step attempts, the
// message says what happened), and a log message per event for clients
// that asked for logs.
func (s *Server) progressSink(ctx context.Context, req mcp.CallToolRequest) func(Event) {
	var token mcp.ProgressToken
	if req.Params.Meta != nil {
		token = req.Params.Meta.ProgressToken
	}
	var mu sync.Mutex
	done := 0
	return func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		switch ev.Kind {
		case agent.EventStepSucceeded, agent.EventStepFailed, agent.EventStepSkipped:
			done++
		}
		msg := describeEvent(ev)
		if token != nil {
			params := map[string]any{"progressToken": token, "progress": done, "message": msg}
			if err := s.mcp.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), params); err != nil {
				s.log.Debug("progress notification not sent", "run", ev.RunID, "err", err)
			}
		}
		level := mcp.LoggingLevelInfo
		if ev.Kind == agent.EventStepFailed || ev.Kind == agent.EventFailed {
			level = mcp.LoggingLevelWarning
		}
		_ = s.mcp.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(level, "ordo", ev))
	}
}

func describeEvent(ev Event) string {
	parts := []string{ev.Kind}
	if ev.ActionID != "" {
		parts = append(parts, ev.ActionID)
	}
	if ev.Tool != "" {
		parts = append(parts, "("+ev.Tool+")")
	}
	if ev.Message != "" {
		parts = append(parts, "- "+ev.Message)
	}
	return fmt.Sprintf("run %s: %s", ev.RunID, strings.Join(parts, " "))
}
