package embed

import "context"

// Embedder turns texts into vectors of a fixed dimension.
type Embedder interface {
	// Identity names the model and every parameter that changes its vectors
	// (e.g. "hashed/v1 dim=512 ..." or "openai https://host text-embedding-3-small").
	Identity() string
	// EmbedDocuments embeds indexed texts, one vector per text, in order.
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
	// EmbedQuery embeds a search query.
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}

// CorpusAware is implemented by embedders whose query vectors depend on
// statistics of the indexed corpus (such as IDF). The recommender reports
// the vector of every document it adds or removes, including documents
// reloaded from a persisted index, so the statistics always match the
// index. Statistics come from the stored vectors, not the texts: a start
// then needs no tokenising.
type CorpusAware interface {
	AddVector(v []float32)
	RemoveVector(v []float32)
}

// WordEmbedder is implemented by embedders whose document vectors are a
// function of tokenize.Words of the text: the recommender passes the words
// it already cut for its lexical index, so a tool is tokenised once.
// EmbedWords(tokenize.Words(t)) equals EmbedDocuments of t.
type WordEmbedder interface {
	EmbedWords(docs [][]string) [][]float32
}
