package recommender

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkSearchSealTools measures one Recommend(k=10) over the 4,076
// Seal-Tools tools, cycling through the dev queries.
func BenchmarkSearchSealTools(b *testing.B) {
	dir := benchData(b)
	tools, err := readFile(filepath.Join(dir, "seal-tools", "tools.jsonl"), ReadTools)
	if err != nil {
		b.Fatal(err)
	}
	queries, err := readFile(filepath.Join(dir, "seal-tools", "queries-dev.jsonl"), ReadQueries)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	r, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := r.Upsert(ctx, tools...); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := r.Recommend(ctx, queries[i%len(queries)].Query, 10); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildSealTools measures indexing the 4,076 Seal-Tools tools in
// memory (tokenising, embedding, BM25, chromem-go insert).
func BenchmarkBuildSealTools(b *testing.B) {
	dir := benchData(b)
	tools, err := readFile(filepath.Join(dir, "seal-tools", "tools.jsonl"), ReadTools)
	if err != nil {
		b.Fatal(err)
	}
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
