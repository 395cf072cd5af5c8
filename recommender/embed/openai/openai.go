package openai

import (
	"context"
	"fmt"
	"strings"

	oa "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/ordo-run/ordo/contracts"
)

// Config selects the endpoint and model. The key is never part of the
// identity or any log line.
type Config struct {
	BaseURL    string // e.g. "http://127.0.0.1:11434/v1"; "" = OpenAI's
	APIKey     string
	Model      string // required, e.g. "text-embedding-3-small"
	Dimensions int    // optional, for models that can shorten vectors
	// BatchSize bounds the inputs per request; default 256.
	BatchSize  int
	MaxRetries int // default 2
}

// Embedder implements embed.Embedder over the embeddings endpoint.
type Embedder struct {
	cfg    Config
	client oa.Client
}

// New checks cfg and builds the client. It makes no request.
func New(cfg Config) (*Embedder, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "embedding model is required").With("field", "model")
	}
	if cfg.Dimensions < 0 {
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "dimensions must not be negative").With("field", "dimensions")
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 256
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 2
	}
	opts := []option.RequestOption{option.WithMaxRetries(cfg.MaxRetries)}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	return &Embedder{cfg: cfg, client: oa.NewClient(opts...)}, nil
}

// Identity names endpoint, model and dimensions: changing any rebuilds the index.
func (e *Embedder) Identity() string {
	base := e.cfg.BaseURL
	if base == "" {
		base = "https://api.openai.com/v1"
	}
	return fmt.Sprintf("openai-compatible base=%s model=%s dims=%d", base, e.cfg.Model, e.cfg.Dimensions)
}

// EmbedDocuments implements embed.Embedder, batching requests.
func (e *Embedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.cfg.BatchSize {
		batch := texts[start:min(start+e.cfg.BatchSize, len(texts))]
		vecs, err := e.embed(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// EmbedQuery implements embed.Embedder.
func (e *Embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vecs, err := e.embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

func (e *Embedder) embed(ctx context.Context, texts []string) ([][]float32, error) {
	params := oa.EmbeddingNewParams{
		Model:          oa.EmbeddingModel(e.cfg.Model),
		Input:          oa.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
		EncodingFormat: oa.EmbeddingNewParamsEncodingFormatFloat,
	}
	if e.cfg.Dimensions > 0 {
		params.Dimensions = oa.Int(int64(e.cfg.Dimensions))
	}
	res, err := e.client.Embeddings.New(ctx, params)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeExternal, "embeddings request: %w", err).With("model", e.cfg.Model)
	}
	if len(res.Data) != len(texts) {
		return nil, contracts.Errorf(contracts.CodeExternal, "embeddings endpoint returned %d vectors for %d inputs", len(res.Data), len(texts)).With("model", e.cfg.Model)
	}
	out := make([][]float32, len(texts))
	for _, d := range res.Data {
		if d.Index < 0 || int(d.Index) >= len(texts) || out[d.Index] != nil {
			return nil, contracts.Errorf(contracts.CodeExternal, "embeddings endpoint returned a bad index %d", d.Index).With("model", e.cfg.Model)
		}
		v := make([]float32, len(d.Embedding))
		for i, x := range d.Embedding {
			v[i] = float32(x)
		}
		out[d.Index] = v
	}
	return out, nil
}
