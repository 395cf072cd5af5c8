// Package tokenize turns tool descriptions and user requests into the terms
// the recommender ranks on, and splits compound requests into clauses.
//
// It is shared by the lexical index (BM25) and the offline embedder so both
// sides of the hybrid ranking see the same words: identifiers are split at
// camelCase, snake_case, dots and script changes, text is lower-cased,
// common English function words are dropped (request verbs too, except in
// tool names) and the Snowball English (Porter2) stemmer folds inflections
// and derivations together.
// It is pure and deterministic; the stop list and the clause connectives are
// generic English, not mined from any benchmark.
package tokenize
