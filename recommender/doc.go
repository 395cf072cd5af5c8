// Package recommender picks the few catalog tools that fit a request, so the
// planner sees a handful of contracts instead of thousands (BigTool style).
//
// It owns the tool index: one chromem-go collection (in memory, or persisted
// to a directory) holding a vector and the contract per tool, plus an
// in-memory BM25 index over the same text and an int8 copy of the vectors
// that the query path scores over the lexical candidates. Coverage says how
// much of a request the index can see at all (near 0 for another script). A search fuses both rankings, and splits a compound
// request into clauses so a goal that needs several tools surfaces each of
// them. The index follows the live catalog incrementally: a tool is
// re-embedded only when its indexed text changes (content hash), and the
// embedder's identity is stored with the index so a model change rebuilds it.
//
// Eval measures the ranking on tool-retrieval data sets (JSONL tools and
// queries) and reports R@k, MRR@10, Full@k, latency and build time.
package recommender
