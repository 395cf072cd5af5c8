package recommender

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/recommender/embed/semantic"
	"github.com/ordo-run/ordo/recommender/tokenize"
)

func static(t *testing.T) *semantic.Static {
	t.Helper()
	s, err := semantic.NewStatic()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// meaningCatalog adds tools whose descriptions share no word with the
// requests of TestSemanticFindsMeaningOnlyMatch.
func meaningCatalog() []contracts.Contract {
	return append(catalog(),
		tool("food.searchRecipes", "food", "Find recipes and cooking instructions", contracts.RiskRead, "dish", "Dish name"),
		tool("stocks.getQuote", "stocks", "Get the current stock price of a company", contracts.RiskRead, "symbol", "Ticker"),
		tool("music.playPlaylist", "music", "Stream music and playlists", contracts.RiskRead, "name", "Playlist name"),
		tool("jobs.searchListings", "jobs", "Search job listings and career openings", contracts.RiskRead, "role", "Role"),
	)
}

// TestSemanticFindsMeaningOnlyMatch: requests that share no content word
// with the right tool get no lexical hit for it; with the static meaning
// vectors the tool is in the top 3.
func TestSemanticFindsMeaningOnlyMatch(t *testing.T) {
	ctx := context.Background()
	cases := map[string]string{
		"dinner ideas for tonight":     "food.searchRecipes",
		"listen to relaxing songs":     "music.playPlaylist",
		"is it going to rain tomorrow": "weather.getForecast",
		"I want to work as a nurse":    "jobs.searchListings",
	}
	lexical := newIndex(t, Options{}, meaningCatalog()...)
	meaning := newIndex(t, Options{Semantic: static(t)}, meaningCatalog()...)
	if st := meaning.Stats(); st.Semantic == "" || lexical.Stats().Semantic != "" {
		t.Fatalf("Stats().Semantic: %q with, %q without", st.Semantic, lexical.Stats().Semantic)
	}
	for q, want := range cases {
		words := tokenize.NameWords(q)
		for _, c := range meaningCatalog() {
			if c.Tool == want && lexical.lex.share(lexical.lex.slots[want], words) > 0 {
				t.Fatalf("%q shares a word with %s: not a meaning-only case", q, want)
			}
		}
		hits, err := lexical.Search(ctx, q, SearchOptions{K: 3})
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(names(hits), want) {
			t.Errorf("lexical ranking found %s for %q: %v", want, q, names(hits))
		}
		hits, err = meaning.Search(ctx, q, SearchOptions{K: 3})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(names(hits), want) {
			t.Errorf("semantic ranking missed %s for %q: %v", want, q, names(hits))
		}
	}
	// The semantic list is filtered like the others.
	hits, err := meaning.Search(ctx, "dinner ideas for tonight", SearchOptions{K: 3, Services: []string{"mail"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.Contract.Service != "mail" {
			t.Errorf("service filter let %s through", h.Tool)
		}
	}
	// A request in a script the model does not know adds nothing.
	if hits, _ := meaning.Search(ctx, "오늘 회의록", SearchOptions{K: 3}); len(hits) != 0 {
		t.Errorf("Korean request got semantic hits: %v", names(hits))
	}
}

// TestSemanticVectorsFollowTheIndex: vectors are made in one batch per
// Upsert, read back with the index after a restart (nothing embedded
// again), and dropped with their tool.
func TestSemanticVectorsFollowTheIndex(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	counting := &countingEmbedder{Static: static(t)}
	newIndex(t, Options{Dir: dir, Semantic: counting}, meaningCatalog()...)
	if counting.batches != 1 || counting.texts != len(meaningCatalog()) {
		t.Fatalf("first index: %d batches of %d texts, want 1 of %d", counting.batches, counting.texts, len(meaningCatalog()))
	}
	counting.batches, counting.texts = 0, 0
	r2 := newIndex(t, Options{Dir: dir, Semantic: counting}, meaningCatalog()...)
	if st := r2.Stats(); st.Embedded != 0 || st.SemanticEmbedded != 0 {
		t.Errorf("restart re-embedded %d tools, %d meaning vectors", st.Embedded, st.SemanticEmbedded)
	}
	if counting.batches != 0 {
		t.Errorf("restart: %d semantic batches of %d texts, want none", counting.batches, counting.texts)
	}
	hits, err := r2.Search(ctx, "dinner ideas for tonight", SearchOptions{K: 3})
	if err != nil || !slices.Contains(names(hits), "food.searchRecipes") {
		t.Fatalf("after restart: %v %v", names(hits), err)
	}
	if err := r2.Remove(ctx, "food.searchRecipes"); err != nil {
		t.Fatal(err)
	}
	hits, _ = r2.Search(ctx, "dinner ideas for tonight", SearchOptions{K: 10})
	if slices.Contains(names(hits), "food.searchRecipes") {
		t.Error("removed tool still found")
	}
}

// countingEmbedder records how the recommender calls an embedder.
type countingEmbedder struct {
	*semantic.Static
	batches, texts int
}

func (c *countingEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	c.batches++
	c.texts += len(texts)
	return c.Static.EmbedDocuments(ctx, texts)
}

// TestSemanticRankingValidation: the new weights are checked like the
// others.
func TestSemanticRankingValidation(t *testing.T) {
	for field, rk := range map[string]Ranking{
		"semantic_weight": func() Ranking { r := DefaultRanking(); r.SemanticWeight = 0.7; return r }(),
		"semantic_min":    func() Ranking { r := DefaultRanking(); r.SemanticMin = 1; return r }(),
	} {
		_, err := New(Options{Ranking: rk})
		if ce := contracts.AsError(err); ce == nil || ce.Code != contracts.CodeInvalidConfig || ce.Details["field"] != field {
			t.Errorf("%s: got %v", field, err)
		}
	}
}

func TestWithoutQuoted(t *testing.T) {
	for in, want := range map[string]string{
		`how to say "Where is the restaurant?" in Swedish`: `how to say  in Swedish`,
		`say 'hello' to Bob's team`:                        `say  to Bob's team`,
		`an "unbalanced quote`:                             `an "unbalanced quote`,
		`“curly” quotes`:                                   ` quotes`,
		`"Can you find me some dinner ideas?"`:             `"Can you find me some dinner ideas?"`, // the quotes wrap the request
	} {
		if got := withoutQuoted(in); got != want {
			t.Errorf("withoutQuoted(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSemanticReadsTaskWords: the meaning list of a request padded with
// request boilerplate is the list of its task words alone; summed into one
// vector, the boilerplate's pieces would outweigh a short task.
func TestSemanticReadsTaskWords(t *testing.T) {
	ctx := context.Background()
	r := newIndex(t, Options{Semantic: static(t)}, meaningCatalog()...)
	padded, err := r.semanticScores(ctx, "Could you please help me, I would like to find some dinner ideas for tonight?", nil)
	if err != nil {
		t.Fatal(err)
	}
	bare, err := r.semanticScores(ctx, "dinner ideas tonight", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(bare) == 0 || !maps.Equal(padded, bare) {
		t.Fatalf("padded request's meaning list %v, task words' %v", padded, bare)
	}
}
