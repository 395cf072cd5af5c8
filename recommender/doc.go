// Package recommender picks the few catalog tools that fit a request, so the
// planner sees a handful of contracts instead of thousands (BigTool style).
//
// It owns the tool index: one chromem-go collection holding each tool's
// vector, an in-memory BM25 index over the tool's text, optional int8
// meaning vectors, and the contracts; a directory persists all of it as one
// append-only file that a start replays without embedding or tokenising
// (indexfile.go). The query path scores the vectors over the lexical
// candidates. Coverage says how much of a request the index can see at all
// (near 0 for another script). A search fuses the rankings, and splits a
// compound request into clauses so a goal that needs several tools
// surfaces each of them. The index follows the live catalog incrementally:
// a tool is re-embedded only when its indexed text changes (content hash),
// and the embedders' identities are stored with the index so a model
// change re-embeds it.
//
// Eval measures the ranking on tool-retrieval data sets (JSONL tools and
// queries) and reports R@k, MRR@10, Full@k, latency and build time.
package recommender
