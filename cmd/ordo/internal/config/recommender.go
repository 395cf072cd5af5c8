package config

import (
	"slices"
)

// Tool recommender embedders (recommender.embedder).
const (
	EmbedderLexical  = "lexical"  // BM25, query likelihood and hashed word vectors only
	EmbedderSemantic = "semantic" // plus static meaning vectors built into the binary
	EmbedderOpenAI   = "openai"   // an OpenAI-compatible /v1/embeddings endpoint
)

// Recommender chooses how the tool index understands requests. The
// default, semantic, runs offline with vectors built into the binary; the
// openai embedder calls an endpoint for every new tool and every search.
type Recommender struct {
	Embedder string              `yaml:"embedder"`
	OpenAI   RecommenderEndpoint `yaml:"openai"`
}

// RecommenderEndpoint is an OpenAI-compatible embeddings endpoint. The key
// is never in the file: APIKeyEnv names the variable that holds it.
type RecommenderEndpoint struct {
	BaseURL    string `yaml:"base_url"`
	Model      string `yaml:"model"`
	APIKeyEnv  string `yaml:"api_key_env"`
	Dimensions int    `yaml:"dimensions"`
}

// APIKey is the endpoint's key from the environment ("" when unset).
// Never log it.
func (e RecommenderEndpoint) APIKey(env func(string) (string, bool)) string {
	v, _ := env(e.APIKeyEnv)
	return v
}

func (c *Config) validateRecommender() error {
	r := c.Recommender
	if !slices.Contains([]string{EmbedderLexical, EmbedderSemantic, EmbedderOpenAI}, r.Embedder) {
		return invalid("recommender.embedder", `"lexical", "semantic" or "openai", got %q`, r.Embedder)
	}
	if r.Embedder != EmbedderOpenAI {
		return nil
	}
	o := r.OpenAI
	if err := validateEndpoint("recommender.openai", o.BaseURL, o.Model, o.APIKeyEnv, "an embedding model name such as text-embedding-3-small"); err != nil {
		return err
	}
	if o.Dimensions < 0 {
		return invalid("recommender.openai.dimensions", "0 (the model's own) or a positive number of dimensions, got %d", o.Dimensions)
	}
	return nil
}
