// Package patterns is Ordo's long-term pattern memory (the LangMem-style
// half of memory/): what worked for a user, so the next run of
// similar work plans better and asks less.
//
// It owns five namespaces, each a chromem-go collection in one directory,
// every record scoped to a user id:
//
//   - plan: goals with the plan that reached them (planner examples);
//   - tool: per tool and step intent, successes, failures, mean duration and
//     should_avoid (recommender boosts and the avoid list);
//   - clarification: a goal's clarifying questions and the answers given
//     (reused automatically once trusted, else offered as suggestions);
//   - behavior: per tool, how the user answered step approvals (predicted
//     accept probability for auto-approval);
//   - workflow: plans saved under a name as reusable templates.
//
// Records are consolidated without an LLM: a new observation that is similar
// enough to a stored record (cosine of the embedded text above
// Options.Similarity, plus an exact key such as the tool) updates its counts
// instead of adding a near-duplicate. Confidence is a rate times the
// cold-start multiplier, so a pattern seen once is never trusted like one
// seen many times.
//
// Collection never blocks a run: the engine hands finished runs to a
// Collector, which consolidates them in the background and only logs when
// that fails. Vectors come from a recommender/embed Embedder (the offline
// hashed one by default); the embedder's identity is kept with the store and
// a change re-embeds every record.
package patterns
