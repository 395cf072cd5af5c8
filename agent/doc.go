// Package agent is Ordo's Plan-then-Execute engine: it turns a goal into a
// validated Action Plan (one LLM call), applies policy, executes the plan's
// DAG in parallel with code (never the model), verifies every result,
// re-plans on failure within a budget, stops for people at interrupts, and
// composes the answer. Every step boundary and every interrupt is
// checkpointed through memory.Checkpointer, so any process sharing the
// store resumes a run exactly where it stopped.
//
// The engine depends on small interfaces it owns (Tools, Recommender,
// llm.LLM) so the host, the recommender and model providers stay
// replaceable and tests use real in-process tools.
//
// Pattern memory (memory/patterns) is optional and switched use by use in
// Config.Memory (memory.go): planner examples, tool advice, clarification
// reuse, step auto-approval, workflow templates, and background collection
// of finished runs. Memory improves a run; its failures only log.
package agent
