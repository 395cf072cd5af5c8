package mcpserver

import (
	"context"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/memory"
)

// Completion bounds: MCP allows at most 100 values per answer; completion
// looks at the caller's newest runs only, because it answers keystrokes.
const (
	maxCompletions  = 100
	completionScope = 500
)

// completer answers completion/complete for the prompts' arguments and the
// run resource templates' {id}. Unknown prompts, templates and arguments
// complete to nothing, as MCP expects of a reference with no suggestions.
type completer struct{ s *Server }

// CompletePromptArgument implements server.PromptCompletionProvider.
func (c completer) CompletePromptArgument(ctx context.Context, prompt string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	switch {
	case prompt == promptReviewRun && arg.Name == argRunID:
		return c.runIDs(ctx, arg.Value)
	case prompt == promptWritePlan && arg.Name == argGoal:
		return c.goals(ctx, arg.Value)
	case prompt == promptWritePlan && arg.Name == argServices:
		return c.services(arg.Value), nil
	}
	return completion(nil), nil
}

// CompleteResourceArgument implements server.ResourceCompletionProvider.
func (c completer) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	if (uri == uriRunTemplate || uri == uriMermaidTmpl || uri == uriEventsTmpl) && arg.Name == "id" {
		return c.runIDs(ctx, arg.Value)
	}
	return completion(nil), nil
}

// myRuns are the caller's newest runs: completion offers only the caller's
// own runs, admins included, so it never leaks other users' run ids.
func (c completer) myRuns(ctx context.Context) ([]memory.RunSummary, error) {
	if c.s.opts.Runs == nil {
		return nil, nil
	}
	return c.s.opts.Runs.List(ctx, memory.Filter{UserID: identityFrom(ctx).User, Limit: completionScope})
}

// runIDs are the caller's run ids, newest first, that start with value or
// whose goal mentions it, so "delete" finds the run that deleted a note.
func (c completer) runIDs(ctx context.Context, value string) (*mcp.Completion, error) {
	v := strings.ToLower(value)
	return c.fromRuns(ctx, func(r memory.RunSummary) string {
		if strings.HasPrefix(r.ID, value) || strings.Contains(strings.ToLower(r.Goal), v) {
			return r.ID
		}
		return ""
	})
}

// goals are the caller's earlier goals that mention value, newest first,
// each once: planning again what worked before is the common case.
func (c completer) goals(ctx context.Context, value string) (*mcp.Completion, error) {
	v := strings.ToLower(value)
	return c.fromRuns(ctx, func(r memory.RunSummary) string {
		if strings.Contains(strings.ToLower(r.Goal), v) {
			return r.Goal
		}
		return ""
	})
}

// fromRuns completes with pick's non-empty values over the caller's runs,
// newest first, each once.
func (c completer) fromRuns(ctx context.Context, pick func(memory.RunSummary) string) (*mcp.Completion, error) {
	runs, err := c.myRuns(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range runs {
		if s := pick(r); s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return completion(out), nil
}

// services completes the last item of a comma-separated service list with
// the catalog's services not yet listed; each value is the whole list.
func (c completer) services(value string) *mcp.Completion {
	if c.s.opts.Catalog == nil {
		return completion(nil)
	}
	head, last := "", value
	if i := strings.LastIndex(value, ","); i >= 0 {
		head, last = value[:i+1], value[i+1:]
	}
	chosen := splitList(head)
	last = strings.TrimSpace(last)
	var names []string
	for _, t := range c.s.opts.Catalog.List() {
		svc := t.Contract.Service
		if strings.HasPrefix(svc, last) && !slices.Contains(chosen, svc) && !slices.Contains(names, svc) {
			names = append(names, svc)
		}
	}
	slices.Sort(names)
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = head + n
	}
	return completion(out)
}

// completion caps values at MCP's 100 and says how many there were.
func completion(values []string) *mcp.Completion {
	c := &mcp.Completion{Values: values, Total: len(values)}
	if c.Values == nil {
		c.Values = []string{}
	}
	if len(c.Values) > maxCompletions {
		c.Values, c.HasMore = c.Values[:maxCompletions], true
	}
	return c
}
