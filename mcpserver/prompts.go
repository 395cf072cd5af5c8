package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/agent/prompts"
	"github.com/ordo-run/ordo/contracts"
)

// Prompt names and their arguments.
const (
	promptWritePlan = "write_plan"
	promptReviewRun = "review_run"
	argGoal         = "goal"
	argServices     = "services"
	argRunID        = "run_id"
)

// planCandidates bounds how many contracts write_plan puts in front of the
// assistant for a large catalog: enough for multi-step plans, few enough to
// stay readable. A catalog within agent.AllToolsBound is shown whole.
const planCandidates = 8

// registerPrompts adds the prompts an assistant uses to work with Ordo
// without Ordo's own model: write a plan, and review a run.
func (s *Server) registerPrompts() {
	s.mcp.AddPrompt(mcp.NewPrompt(promptWritePlan,
		mcp.WithPromptTitle("Write an Ordo plan"),
		mcp.WithPromptDescription("Write an Action Plan for a goal yourself (for when Ordo has no model): gives you the plan schema, Ordo's planning rules and the catalog tools that best match the goal, and says how to submit the plan with plan/execute."),
		mcp.WithArgument(argGoal, mcp.ArgumentDescription("What the plan should achieve, in plain words."), mcp.RequiredArgument()),
		mcp.WithArgument(argServices, mcp.ArgumentDescription("Optional comma-separated services to plan with (e.g. text,notes); default all.")),
	), s.promptWritePlan)
	s.mcp.AddPrompt(mcp.NewPrompt(promptReviewRun,
		mcp.WithPromptTitle("Review an Ordo run"),
		mcp.WithPromptDescription("Summarise one of your runs: goal, status, plan graph, steps, decisions, result or error, and what it waits for next."),
		mcp.WithArgument(argRunID, mcp.ArgumentDescription("The run to review (see list_runs)."), mcp.RequiredArgument()),
	), s.promptReviewRun)
}

func (s *Server) promptWritePlan(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	goal := strings.TrimSpace(req.Params.Arguments[argGoal])
	if goal == "" {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "prompt %s needs a goal", promptWritePlan).With("field", argGoal)
	}
	services := splitList(req.Params.Arguments[argServices])
	tools, err := s.planCandidates(ctx, goal, services)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Write an Ordo Action Plan for this goal, then run it with Ordo's tools.\n\nGoal: %s\n", goal)
	if len(services) > 0 {
		fmt.Fprintf(&b, "Use only tools of these services: %s\n", strings.Join(services, ", "))
	}
	b.WriteString(`
How to run it:
1. Call the "plan" tool with {"plan": <your plan>}. Ordo checks it against the schema and the tool contracts, applies policy and answers with run_id and status; a rejected plan comes back as a tool error whose details.field names what to fix.
2. Status "ready": call "execute" with {"run_id": ...}. Status "awaiting_approval": show the user the plan (the mermaid graph) and the policy, then call "approve" with {"run_id": ..., "decision": "approve"} (or "edit" with a corrected plan, or "reject").
3. A run may stop again ("interrupted") for a step approval or missing inputs: ask the user and answer with "approve". Or use "execute" with {"plan": ...} to plan and run in one call.
Set "version" to "1.0" and "timezone" to the user's IANA timezone (UTC if unknown).

Planning rules (Ordo's own planner follows the same):
`)
	b.WriteString(prompts.PlanRules())
	b.WriteString("\nCandidate tools, best matches for the goal first (the whole catalog is at resource " + uriCatalog +
		"). Use their exact tool ids; produce only the state keys their produces_map yields:\n")
	if len(tools) == 0 {
		b.WriteString("(none found: the catalog has no tool for these services)\n")
	} else {
		data, err := json.MarshalIndent(tools, "", "  ")
		if err != nil {
			return nil, contracts.Errorf(contracts.CodeInternal, "encode contracts: %w", err)
		}
		b.WriteString("```json\n" + string(data) + "\n```\n")
	}
	b.WriteString("\nThe Action Plan JSON Schema (draft 2020-12; also resource " + uriPlanSchema + "):\n```json\n")
	b.Write(contracts.PlanSchema())
	b.WriteString("\n```\n")
	return &mcp.GetPromptResult{
		Description: "Write and run an Action Plan for: " + goal,
		Messages:    []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(b.String()))},
	}, nil
}

// planCandidates are the contracts most relevant to goal, chosen as for
// Ordo's own planner: a small catalog whole, else the best matches topped up.
func (s *Server) planCandidates(ctx context.Context, goal string, services []string) ([]contracts.Contract, error) {
	cands, err := s.opts.Engine.ToolCandidates(ctx, agent.ToolQuery{Goal: goal, K: planCandidates, Services: services, Whole: true, TopUp: true})
	if err != nil {
		return nil, err
	}
	out := make([]contracts.Contract, len(cands))
	for i, c := range cands {
		out[i] = c.Tool.Contract
	}
	return out, nil
}

func (s *Server) promptReviewRun(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	id := strings.TrimSpace(req.Params.Arguments[argRunID])
	if id == "" {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "prompt %s needs a run_id", promptReviewRun).With("field", argRunID)
	}
	run, err := s.loadRun(ctx, id)
	if err != nil {
		return nil, err
	}
	record, err := json.Marshal(run)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInternal, "encode run: %w", err)
	}
	intro := "Review this Ordo run for the user: say what it was asked to do, what happened step by step, and what, if anything, they must decide next (and which \"approve\" call would do it). Keep it short; quote errors exactly.\n\n"
	return &mcp.GetPromptResult{
		Description: fmt.Sprintf("Review of run %s (%s)", run.ID, run.Status),
		Messages: []mcp.PromptMessage{
			mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(intro+summarizeRun(run))),
			mcp.NewPromptMessage(mcp.RoleUser, mcp.NewEmbeddedResource(mcp.TextResourceContents{
				URI: runURIPrefix + run.ID, MIMEType: "application/json", Text: string(record)})),
		},
	}, nil
}

// summarizeRun renders a run record as the text an assistant reads first;
// the full record follows it as an embedded resource.
func summarizeRun(run *contracts.Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Run %s\nGoal: %s\nStatus: %s\nOwner: %s\nCreated: %s, updated: %s (checkpoint %d)\n",
		run.ID, run.Goal, run.Status, run.UserID, run.CreatedAt.UTC().Format(timeFormat), run.UpdatedAt.UTC().Format(timeFormat), run.Seq)
	if n := len(run.Plans); n > 0 {
		cur := run.Plans[n-1]
		fmt.Fprintf(&b, "\nPlan version %d of %d (source: %s", cur.Version, n, cur.Source)
		if cur.Reason != "" {
			fmt.Fprintf(&b, "; reason: %s", cur.Reason)
		}
		fmt.Fprintf(&b, "), %d actions:\n", len(cur.Plan.Actions))
		for _, a := range cur.Plan.Actions {
			fmt.Fprintf(&b, "- %s: %s (%s)", a.ID, a.Tool, a.Intent)
			if p, ok := run.Policy[a.ID]; ok {
				fmt.Fprintf(&b, ", policy %s", p.Decision)
				if p.Reason != "" {
					fmt.Fprintf(&b, " (%s)", p.Reason)
				}
			}
			b.WriteString("\n")
		}
		if cur.Mermaid != "" {
			b.WriteString("```mermaid\n" + cur.Mermaid + "\n```\n")
		}
	}
	if len(run.Steps) > 0 {
		b.WriteString("\nSteps:\n")
		for _, st := range run.Steps {
			fmt.Fprintf(&b, "- %s %s attempt %d: %s", st.ActionID, st.Tool, st.Attempt, st.Status)
			if len(st.Produced) > 0 {
				fmt.Fprintf(&b, ", produced %s", strings.Join(st.Produced, ", "))
			}
			if st.Error != nil {
				fmt.Fprintf(&b, ", error %d: %s", st.Error.Code, st.Error.Message)
			}
			b.WriteString("\n")
		}
	}
	for _, d := range run.Decisions {
		fmt.Fprintf(&b, "Decision: %s", d.Interrupt.Kind)
		if d.Interrupt.ActionID != "" {
			fmt.Fprintf(&b, " of %s", d.Interrupt.ActionID)
		}
		fmt.Fprintf(&b, " answered %s by %s at %s", d.Decision.Kind, d.Decision.By, d.At.UTC().Format(timeFormat))
		if d.Decision.Note != "" {
			fmt.Fprintf(&b, " (%s)", d.Decision.Note)
		}
		b.WriteString("\n")
	}
	if in := run.Interrupt; in != nil && run.Status == contracts.RunInterrupted {
		fmt.Fprintf(&b, "\nWaiting for: %s", in.Kind)
		if in.ActionID != "" {
			fmt.Fprintf(&b, " of %s (%s)", in.ActionID, in.Tool)
		}
		fmt.Fprintf(&b, ": %s\n", in.Message)
		for _, q := range in.Questions {
			fmt.Fprintf(&b, "Question: %s\n", q)
		}
		if len(in.Fields) > 0 {
			fmt.Fprintf(&b, "Missing inputs: %s\n", strings.Join(in.Fields, ", "))
		}
		if len(in.Payload) > 0 {
			fmt.Fprintf(&b, "Payload: %s\n", in.Payload)
		}
		fmt.Fprintf(&b, "Answer with the approve tool: {\"run_id\": %q, \"decision\": one of %s}\n", run.ID, strings.Join(decisionsFor(in.Kind), " | "))
	}
	if run.Result != nil {
		fmt.Fprintf(&b, "\nResult (%s): %s\n", run.Result.Composer, run.Result.Answer)
	}
	if run.Error != nil {
		fmt.Fprintf(&b, "\nError %d: %s\n", run.Error.Code, run.Error.Message)
	}
	return b.String()
}

const timeFormat = "2006-01-02 15:04:05Z"

// splitList splits a comma-separated argument into its trimmed, non-empty
// items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
