package app

import (
	"context"

	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/recommender"
	"github.com/ordo-run/ordo/recommender/embed/openai"
	"github.com/ordo-run/ordo/recommender/embed/semantic"
)

// RecommenderOptions turns recommender.* into the tool index's embedders:
// lexical keeps the offline hashed vectors only; semantic adds the static
// meaning vectors built into the binary; openai embeds with the endpoint
// and compares every tool (VectorPool 0), since its vectors carry meaning
// that a lexical pool would cut off.
func RecommenderOptions(cfg *config.Config, env config.Env) (recommender.Options, error) {
	var o recommender.Options
	switch r := cfg.Recommender; r.Embedder {
	case config.EmbedderLexical:
	case config.EmbedderSemantic:
		s, err := semantic.NewStatic()
		if err != nil {
			return o, contracts.Errorf(contracts.CodeInternal, "semantic embedder: %w", err).With("key", "recommender.embedder")
		}
		o.Semantic = s
	case config.EmbedderOpenAI:
		e, err := openai.New(openai.Config{BaseURL: r.OpenAI.BaseURL, Model: r.OpenAI.Model,
			Dimensions: r.OpenAI.Dimensions, APIKey: r.OpenAI.APIKey(env)})
		if err != nil {
			return o, err
		}
		o.Embedder = e
		o.Ranking = recommender.DefaultRanking()
		o.Ranking.VectorPool = 0
		o.Ranking.ClauseVectors = false // one endpoint request per search, not one per clause
	default:
		return o, contracts.Errorf(contracts.CodeInvalidConfig, "unknown recommender.embedder %q", r.Embedder).With("key", "recommender.embedder")
	}
	return o, nil
}

// indexEvents follows the catalog's events into the tool index. The
// events waiting in the channel are taken together: a hot-added plugin's
// tools arrive as one event each, and consecutive additions and changes
// become one UpsertOffers (one embedding batch); removals keep their
// place. Each offer carries the event's contract hash, so the index tells
// an unchanged tool by comparing it and never hashes a contract itself.
func (a *App) indexEvents(ctx context.Context, events <-chan host.CatalogEvent) {
	var batch []recommender.Offer
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if err := a.Recommender.UpsertOffers(ctx, batch...); err != nil && ctx.Err() == nil {
			a.Log.Error("tool index update", "tools", len(batch), "err", err)
		}
		batch = batch[:0]
	}
	apply := func(ev host.CatalogEvent) {
		if ev.Kind != host.Removed {
			batch = append(batch, recommender.Offer{Contract: ev.Contract, Hash: ev.Hash})
			return
		}
		flush()
		if err := a.Recommender.Apply(ctx, recommender.Change{Kind: recommender.Removed, Tool: ev.Tool, Contract: ev.Contract}); err != nil && ctx.Err() == nil {
			a.Log.Error("tool index update", "tool", ev.Tool, "err", err)
		}
	}
	for ev := range events {
		apply(ev)
	drain:
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					break drain
				}
				apply(ev)
			default:
				break drain
			}
		}
		flush()
	}
}
