package patterns

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ordo-run/ordo/contracts"
)

// candidates is how many nearest records a query weighs before filtering.
const candidates = 20

// planShape is the exact part of a plan record's key: its tools in order.
// Two plans for similar goals that use different tools are different
// patterns.
func planShape(p *contracts.Plan) string {
	if p == nil {
		return ""
	}
	tools := make([]string, len(p.Actions))
	for i, a := range p.Actions {
		tools[i] = a.Tool
	}
	return strings.Join(tools, ">")
}

// Example is a remembered plan that worked for a similar goal.
type Example struct {
	ID         string
	Goal       string
	Plan       contracts.Plan
	Similarity float64 // of its goal to the asked one
	Confidence float64 // success rate times the cold-start multiplier
	// Score orders examples: similarity × success rate × (0.7 + 0.3 ×
	// multiplier): a pattern seen rarely counts for less.
	Score float64
}

func checkQuery(user, text, field string) error {
	if err := checkName("user", user, true); err != nil {
		return err
	}
	if strings.TrimSpace(text) == "" {
		return contracts.Errorf(contracts.CodeInvalidInput, "%s is empty", field).With("field", field)
	}
	return nil
}

// Examples returns up to k of the user's plans that worked for goals
// similar to goal (at least Options.MinSimilarity), best first: the
// planner's examples.
func (m *Memory) Examples(ctx context.Context, user, goal string, k int) ([]Example, error) {
	if err := checkQuery(user, goal, "goal"); err != nil {
		return nil, err
	}
	if k < 0 {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "k must not be negative, got %d", k).With("field", "k")
	}
	near, err := m.nearest(ctx, NSPlan, map[string]string{metaUser: user}, goal, max(k, candidates))
	if err != nil {
		return nil, err
	}
	var out []Example
	for _, r := range near {
		if r.sim < m.opts.MinSimilarity || r.SuccessRate() < 0.5 || r.Plan == nil {
			continue
		}
		out = append(out, Example{ID: r.ID, Goal: r.Text, Plan: *r.Plan, Similarity: r.sim, Confidence: r.Confidence(),
			Score: r.sim * r.SuccessRate() * (0.7 + 0.3*Multiplier(r.Samples()))})
	}
	slices.SortStableFunc(out, func(a, b Example) int { return cmpDesc(a.Score, b.Score) })
	return out[:min(k, len(out))], nil
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// ToolAdvice is what memory says about tools for one step or goal, in the
// shape of recommender.SearchOptions' Boost and Avoid.
type ToolAdvice struct {
	// Boost is added to a tool's recommender score: BoostWeight × the
	// tool's confidence for the most similar remembered step.
	Boost map[string]float64
	// Avoid lists tools marked should_avoid for the most similar step.
	Avoid []string
}

// ToolAdvice weighs the user's tool records for steps similar to text (at
// least Options.MinSimilarity). Each tool is judged by its most similar
// record, so a tool that fails for one kind of step is not dropped from
// another.
func (m *Memory) ToolAdvice(ctx context.Context, user, text string) (ToolAdvice, error) {
	adv := ToolAdvice{Boost: map[string]float64{}}
	if err := checkQuery(user, text, "text"); err != nil {
		return adv, err
	}
	near, err := m.nearest(ctx, NSTool, map[string]string{metaUser: user}, text, candidates)
	if err != nil {
		return adv, err
	}
	seen := map[string]bool{}
	for _, r := range near { // most similar first
		if r.sim < m.opts.MinSimilarity || seen[r.Tool] {
			continue
		}
		seen[r.Tool] = true
		if r.ShouldAvoid {
			adv.Avoid = append(adv.Avoid, r.Tool)
			continue
		}
		if b := m.opts.BoostWeight * r.Confidence(); b > 0 {
			adv.Boost[r.Tool] = b
		}
	}
	slices.Sort(adv.Avoid)
	return adv, nil
}

// Clarification is a remembered answer set for a similar goal.
type Clarification struct {
	ID         string
	Goal       string
	Questions  []string
	Answers    map[string]any
	ReuseCount int
	Confidence float64
	Similarity float64
	// Auto is true when the answers may be applied without asking:
	// ReuseCount >= Options.AutoReuseCount and Confidence >=
	// Options.AutoReuseConfidence (default 5 and 0.9). Otherwise they
	// are only a suggestion.
	Auto bool
}

// Suggestions renders the answers as text, the shape of
// contracts.Interrupt.Suggestions.
func (c Clarification) Suggestions() map[string]string {
	out := make(map[string]string, len(c.Answers))
	for k, v := range c.Answers {
		out[k] = answerText(v)
	}
	return out
}

// answerText is a remembered answer as a person would type it: a string
// as it is, anything else as JSON.
func answerText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		b = fmt.Appendf(nil, "%v", v)
	}
	return string(b)
}

// InputSuggestions are the values the user last gave for fields of tool
// when a run asked for them (input_required), keyed as fields names them
// ("$.channel" or "channel"); fields never answered are absent.
func (m *Memory) InputSuggestions(ctx context.Context, user, tool string, fields []string) (map[string]string, error) {
	if err := checkQuery(user, tool, "tool"); err != nil {
		return nil, err
	}
	near, err := m.nearest(ctx, NSBehavior, map[string]string{metaUser: user, metaKey: tool}, tool, 1)
	if err != nil || len(near) == 0 {
		return nil, err
	}
	out := map[string]string{}
	for _, f := range fields {
		if v, ok := near[0].Answers[strings.TrimPrefix(f, "$.")]; ok {
			out[f] = answerText(v)
		}
	}
	return out, nil
}

// Clarification returns the user's remembered clarification for a goal
// at least Options.Similarity alike, or nil when there is none.
func (m *Memory) Clarification(ctx context.Context, user, goal string) (*Clarification, error) {
	if err := checkQuery(user, goal, "goal"); err != nil {
		return nil, err
	}
	near, err := m.nearest(ctx, NSClarification, map[string]string{metaUser: user}, goal, 1)
	if err != nil || len(near) == 0 || near[0].sim < m.opts.Similarity {
		return nil, err
	}
	r := near[0]
	c := &Clarification{ID: r.ID, Goal: r.Text, Questions: r.Questions, Answers: maps.Clone(r.Answers),
		ReuseCount: r.ReuseCount, Confidence: r.Confidence(), Similarity: r.sim}
	c.Auto = c.ReuseCount >= m.opts.AutoReuseCount && c.Confidence >= m.opts.AutoReuseConfidence
	return c, nil
}

// Prediction is how the user is expected to answer a step approval.
type Prediction struct {
	Tool    string
	Samples int // the person's past decisions on this tool
	// Probability of a plain approval: the approval rate times the
	// cold-start multiplier.
	Probability float64
	// Accept is true when Probability > Options.AutoApproveAbove; the
	// engine auto-approves only when that is also enabled.
	Accept bool
}

// PredictApproval predicts the user's answer to a step approval of tool.
func (m *Memory) PredictApproval(ctx context.Context, user, tool string) (Prediction, error) {
	p := Prediction{Tool: tool}
	if err := checkQuery(user, tool, "tool"); err != nil {
		return p, err
	}
	near, err := m.nearest(ctx, NSBehavior, map[string]string{metaUser: user, metaKey: tool}, tool, 1)
	if err != nil || len(near) == 0 {
		return p, err
	}
	p.Samples, p.Probability = near[0].Samples(), near[0].Confidence()
	p.Accept = p.Probability > m.opts.AutoApproveAbove
	return p, nil
}
