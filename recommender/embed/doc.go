// Package embed defines how the recommender turns text into vectors and
// ships the offline default: a deterministic hashed-feature embedder that
// needs no network and no model download.
//
// An Embedder names itself (Identity); the recommender stores that name with
// its index and rebuilds the index when it changes, so vectors from two
// different models are never compared; Manifest is that stored record,
// shared by the tool index and pattern memory. Network providers live in
// their own subpackages (embed/openai) so the core does not pull in their
// clients.
package embed
