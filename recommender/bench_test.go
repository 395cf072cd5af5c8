package recommender

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ordo-run/ordo/recommender/embed/semantic"
)

// searchFixtures reads the Seal-Tools dev queries and loads the static
// meaning vectors, which every search benchmark runs with.
func searchFixtures(b *testing.B) ([]QueryRecord, *semantic.Static) {
	queries := benchQueries(b, "seal-tools")
	sem, err := semantic.NewStatic()
	if err != nil {
		b.Fatal(err)
	}
	return queries, sem
}

// BenchmarkSearchSealTools measures one Recommend(k=10) over the 4,076
// Seal-Tools tools, cycling through the dev queries, without and with the
// semantic list.
func BenchmarkSearchSealTools(b *testing.B) {
	tools := benchTools(b, "seal-tools")
	queries, sem := searchFixtures(b)
	ctx := context.Background()
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

// BenchmarkSearchScale measures one Recommend(k=10) of the Seal-Tools dev
// queries over scaleCatalog's ORDO_SCALE tools (skipped unless set), with
// the default ranking and semantic list, and without the clause lists'
// vector side: their ratio is that side's cost at scale.
// ORDO_SCALE=50000 go test -run XXX -bench SearchScale ./recommender/
func BenchmarkSearchScale(b *testing.B) {
	n, _ := strconv.Atoi(os.Getenv("ORDO_SCALE"))
	if n <= 0 {
		b.Skip("set ORDO_SCALE to the catalog size, e.g. 50000")
	}
	tools := scaleCatalog(b, n)
	queries, sem := searchFixtures(b)
	ctx := context.Background()
	noClauseVectors := DefaultRanking()
	noClauseVectors.ClauseVectors = false
	var rs [2]*Recommender // default, without clause vectors
	for j, rk := range []Ranking{DefaultRanking(), noClauseVectors} {
		var err error
		if rs[j], err = New(Options{Semantic: sem, Ranking: rk}); err != nil {
			b.Fatal(err)
		}
		if err := rs[j].Upsert(ctx, tools...); err != nil {
			b.Fatal(err)
		}
	}
	// Each iteration runs one query on both, first one then the other in
	// turn, so a load swing on the shared machine hits both alike; the
	// ratio is the figure.
	var spent [2]time.Duration
	iters := 0
	for i := 0; b.Loop(); i++ {
		q := queries[i%len(queries)].Query
		for k := range 2 {
			j := (i + k) % 2
			t0 := time.Now()
			if _, err := rs[j].Recommend(ctx, q, 10); err != nil {
				b.Fatal(err)
			}
			spent[j] += time.Since(t0)
		}
		iters++
	}
	b.ReportMetric(float64(spent[0].Microseconds())/1000/float64(iters), "default-ms/query")
	b.ReportMetric(float64(spent[1].Microseconds())/1000/float64(iters), "noclausevectors-ms/query")
	b.ReportMetric(float64(spent[0])/float64(spent[1]), "ratio")
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
