package embed

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/ordo-run/ordo/recommender/tokenize"
)

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestHashedIsDeterministicAndNormalised(t *testing.T) {
	ctx := context.Background()
	a, _ := NewHashed(HashedOptions{}).EmbedDocuments(ctx, []string{"getWeatherForecast for a city", ""})
	b, _ := NewHashed(HashedOptions{}).EmbedDocuments(ctx, []string{"getWeatherForecast for a city", ""})
	for i := range a {
		if len(a[i]) != 256 || math.Abs(dot(a[i], a[i])-1) > 1e-5 {
			t.Fatalf("vector %d: dim %d, norm² %f", i, len(a[i]), dot(a[i], a[i]))
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				t.Fatal("two embedders disagree on the same text")
			}
		}
	}
}

func TestHashedSimilarityFollowsMeaningfulOverlap(t *testing.T) {
	ctx := context.Background()
	h := NewHashed(HashedOptions{})
	docs := []string{"weather forecast for a city", "send an email message", "forecasting stock prices", "delete an email"}
	vs, _ := h.EmbedDocuments(ctx, docs)
	for _, v := range vs {
		h.AddVector(v)
	}
	q, _ := h.EmbedQuery(ctx, "what is the weather forecast")
	if !(dot(q, vs[0]) > dot(q, vs[2]) && dot(q, vs[2]) > dot(q, vs[1])) {
		t.Fatalf("similarities %f %f %f out of order", dot(q, vs[0]), dot(q, vs[2]), dot(q, vs[1]))
	}
	// Character n-grams: an inflected form still lands near its root.
	q2, _ := h.EmbedQuery(ctx, "emailing")
	if dot(q2, vs[1]) <= dot(q2, vs[0]) {
		t.Fatal("n-grams did not link emailing to email")
	}
}

func TestHashedCorpusStatisticsAreReversible(t *testing.T) {
	ctx := context.Background()
	h := NewHashed(HashedOptions{Dim: 64})
	vs, _ := h.EmbedDocuments(ctx, []string{"weather forecast", "email email email weather"})
	h.AddVector(vs[0])
	before, _ := h.EmbedQuery(ctx, "weather email")
	h.AddVector(vs[1])
	during, _ := h.EmbedQuery(ctx, "weather email")
	h.RemoveVector(vs[1])
	after, _ := h.EmbedQuery(ctx, "weather email")
	same := func(a, b []float32) bool {
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
		return true
	}
	if same(before, during) || !same(before, after) {
		t.Fatal("IDF did not follow the corpus, or removal did not undo an add")
	}
	if h.Identity() == NewHashed(HashedOptions{}).Identity() {
		t.Fatal("identity ignores the dimension")
	}
}

// TestHashedEmbedWordsMatchesText: the recommender's tokens give the same
// vectors as the text.
func TestHashedEmbedWordsMatchesText(t *testing.T) {
	h := NewHashed(HashedOptions{})
	texts := []string{"weather.getForecast\nGet the weather forecast\ncity: City name", "help", ""}
	want, _ := h.EmbedDocuments(context.Background(), texts)
	words := make([][]string, len(texts))
	for i, t := range texts {
		words[i] = tokenize.Words(t)
	}
	for i, v := range h.EmbedWords(words) {
		if !slices.Equal(v, want[i]) {
			t.Fatalf("text %d: words and text embed differently", i)
		}
	}
}
