// Package tokenize turns tool descriptions and user requests into the terms
// the recommender ranks on, and splits compound requests into clauses.
//
// It is shared by the lexical index (BM25) and the offline embedder so both
// sides of the hybrid ranking see the same words: identifiers are split at
// camelCase, snake_case and dots, text is lower-cased, common English function
// words are dropped and the Porter stemmer folds inflections and derivations
// together.
// It is pure and deterministic; the stop list and the clause connectives are
// generic English, not mined from any benchmark.
package tokenize
