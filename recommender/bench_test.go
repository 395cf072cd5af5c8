package recommender

import (
	"context"
	"testing"

	"github.com/ordo-run/ordo/recommender/embed/semantic"
)

// BenchmarkSearchSealTools measures one Recommend(k=10) over the 4,076
// Seal-Tools tools, cycling through the dev queries, without and with the
// semantic list.
func BenchmarkSearchSealTools(b *testing.B) {
	tools, queries := benchTools(b, "seal-tools"), benchQueries(b, "seal-tools")
	ctx := context.Background()
	sem, err := semantic.NewStatic()
	if err != nil {
		b.Fatal(err)
	}
	for name, opts := range map[string]Options{"lexical": {}, "semantic": {Semantic: sem}} {
		b.Run(name, func(b *testing.B) {
			r, err := New(opts)
			if err != nil {
				b.Fatal(err)
			}
			if err := r.Upsert(ctx, tools...); err != nil {
				b.Fatal(err)
			}
			for i := 0; b.Loop(); i++ {
				if _, err := r.Recommend(ctx, queries[i%len(queries)].Query, 10); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBuildSealTools measures indexing the 4,076 Seal-Tools tools in
// memory (tokenising, embedding, BM25, chromem-go insert).
func BenchmarkBuildSealTools(b *testing.B) {
	tools := benchTools(b, "seal-tools")
	ctx := context.Background()
	for b.Loop() {
		r, err := New(Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Upsert(ctx, tools...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSemanticEmbed measures the static meaning vectors of one tool
// text (name and description, as indexed) and of one request, cycling
// through the Seal-Tools tools and dev queries.
func BenchmarkSemanticEmbed(b *testing.B) {
	tools, queries := benchTools(b, "seal-tools"), benchQueries(b, "seal-tools")
	s, err := semantic.NewStatic()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("tool", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			s.Embed(toolFields(tools[i%len(tools)]).semanticText())
		}
	})
	b.Run("query", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			s.Embed(queries[i%len(queries)].Query)
		}
	})
}
