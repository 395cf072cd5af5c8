package recommender

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/recommender/embed"
)

func tool(name, service, desc string, risk contracts.Risk, params ...string) contracts.Contract {
	props := map[string]any{}
	for i := 0; i+1 < len(params); i += 2 {
		props[params[i]] = map[string]any{"type": "string", "description": params[i+1]}
	}
	schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
	return contracts.Contract{Tool: name, Service: service, Description: desc, RiskLevel: risk,
		InputSchema: schema, OutputSchema: json.RawMessage(`{}`)}
}

func catalog() []contracts.Contract {
	return []contracts.Contract{
		tool("weather.getForecast", "weather", "Get the weather forecast for a city", contracts.RiskRead, "city", "City name"),
		tool("weather.getAirQuality", "weather", "Air quality index for a location", contracts.RiskRead, "zip", "Postal code"),
		tool("mail.sendEmail", "mail", "Send an email message to a recipient", contracts.RiskWrite, "to", "Recipient address", "body", "Message text"),
		tool("mail.deleteEmail", "mail", "Delete an email message permanently", contracts.RiskDestructive, "id", "Message id"),
		tool("calendar.createEvent", "calendar", "Create a calendar event with a start time", contracts.RiskWrite, "title", "Event title"),
		tool("files.searchFiles", "files", "Search documents by keyword", contracts.RiskRead, "query", "Keywords"),
		tool("translate.translateText", "translate", "Translate text into another language", contracts.RiskRead, "target_language", "Language code"),
	}
}

func newIndex(t *testing.T, opts Options, cs ...contracts.Contract) *Recommender {
	t.Helper()
	r, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	if len(cs) > 0 {
		if err := r.Upsert(context.Background(), cs...); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func names(hs []Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Tool
	}
	return out
}

func TestRankingPutsTheMatchingToolFirst(t *testing.T) {
	r := newIndex(t, Options{}, catalog()...)
	ctx := context.Background()
	cases := map[string]string{
		"what will the weather be like in Lisbon tomorrow": "weather.getForecast",
		"send the report to alice by email":                "mail.sendEmail",
		"put a meeting on my calendar at 3pm":              "calendar.createEvent",
		"translate this paragraph into German":             "translate.translateText",
		"find documents mentioning the budget":             "files.searchFiles",
	}
	for q, want := range cases {
		got, err := r.Recommend(ctx, q, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || got[0] != want {
			t.Errorf("Recommend(%q) = %v, want %s first", q, got, want)
		}
	}
}

func TestCompoundRequestSurfacesEveryTool(t *testing.T) {
	r := newIndex(t, Options{}, catalog()...)
	got, err := r.Recommend(context.Background(),
		"Check the weather forecast for Oslo. Then create a calendar event for the hike, and finally send an email to Bob with the plan.", 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"weather.getForecast", "calendar.createEvent", "mail.sendEmail"} {
		if !slices.Contains(got, want) {
			t.Errorf("top 3 %v lacks %s", got, want)
		}
	}
}

// TestClauseListsUseVectors: two tools hold the same stemmed words
// ("text", "translat"), so BM25 ties them and the tie goes by name to the
// wrong one; the clause's vector side (character grams: "translate" is
// whole in one of them) picks the right one, which then also leads the
// fused order. Clause vectors are on by default.
func TestClauseListsUseVectors(t *testing.T) {
	cs := append(slices.DeleteFunc(catalog(), func(c contracts.Contract) bool { return c.Service == "translate" }),
		tool("lang.textTranslation", "lang", "Text translation", contracts.RiskRead),
		tool("lang.translateText", "lang", "Translate text", contracts.RiskRead))
	const q = "Check the weather forecast for Oslo. Then translate the text for Bob."
	for _, vectors := range []bool{true, false} { // the default, then without
		rk := DefaultRanking()
		if !vectors {
			rk.ClauseVectors = false
		}
		r := newIndex(t, Options{Ranking: rk}, cs...)
		clause, err := r.rankList(context.Background(), "translate the text for Bob", nil, clauseList)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Recommend(context.Background(), q, 2)
		if err != nil {
			t.Fatal(err)
		}
		want := "lang.textTranslation" // BM25 tie, broken by name
		if vectors {
			want = "lang.translateText"
		}
		if clause.order[0] != want || !slices.Contains(got, want) {
			t.Errorf("ClauseVectors %v: clause list %v, top 2 %v; want %s first", vectors, clause.order, got, want)
		}
	}
}

// TestDiversificationGivesEachClauseASlot: near-duplicates of the first
// clause's tool outscore the second clause's only tool; plain fusion fills
// the top 2 with them, xQuAD gives the second clause its slot.
func TestDiversificationGivesEachClauseASlot(t *testing.T) {
	r := newIndex(t, Options{}, catalog()...)
	const a, a2, a3, b = "weather.getForecast", "weather.getAirQuality", "files.searchFiles", "mail.sendEmail"
	scores := func() map[string]float64 { return map[string]float64{a: 1, a2: 0.9, a3: 0.8, b: 0.5} }
	clauses := []ranked{
		{order: []string{a, a2, a3}, score: map[string]float64{a: 1, a2: 0.95, a3: 0.9}},
		{order: []string{b}, score: map[string]float64{b: 1}},
	}
	if got := names(r.hits(scores(), 2)); !slices.Equal(got, []string{a, a2}) {
		t.Fatalf("plain order %v, want [%s %s]", got, a, a2)
	}
	hits := r.diversify(scores(), clauses, 4)
	if got := names(hits); !slices.Equal(got, []string{a, b, a2, a3}) {
		t.Fatalf("diversified order %v, want [%s %s %s %s]", got, a, b, a2, a3)
	}
}

// TestScoresAreRelevance: a hit's score says how much of the request (or
// of its best clause) the tool holds, not its rank. Unknown words (names,
// values) count for nobody; a tool holding every known word scores 1.
func TestScoresAreRelevance(t *testing.T) {
	r := newIndex(t, Options{}, catalog()...)
	score := func(q, tool string) float64 {
		t.Helper()
		hs, err := r.Search(context.Background(), q, SearchOptions{K: 7})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hs {
			if h.Score < 0 || h.Score > 1 {
				t.Fatalf("%q: score %v of %s outside 0..1", q, h.Score, h.Tool)
			}
			if h.Tool == tool {
				return h.Score
			}
		}
		return 0
	}
	if s := score("weather forecast for Zanzibar", "weather.getForecast"); s != 1 {
		t.Errorf("a tool holding every known word scored %v, want 1", s)
	}
	// Both tools of a two-part request fully serve their part.
	q := "weather forecast and air quality"
	if a, b := score(q, "weather.getForecast"), score(q, "weather.getAirQuality"); a != 1 || b != 1 {
		t.Errorf("compound request: scores %v and %v, want 1 and 1", a, b)
	}
	partial := score("air quality forecast", "weather.getAirQuality")
	if partial <= 0.3 || partial >= 1 {
		t.Errorf("a tool holding 2 of 3 words scored %v, want between", partial)
	}
	if s := score("translate", "mail.sendEmail"); s != 0 {
		t.Errorf("a tool sharing no word scored %v, want 0", s)
	}
}

func TestFilters(t *testing.T) {
	r := newIndex(t, Options{}, catalog()...)
	ctx := context.Background()
	hs, err := r.Search(ctx, "delete or send an email message", SearchOptions{K: 10, Risk: []contracts.Risk{contracts.RiskWrite}})
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) == 0 || hs[0].Tool != "mail.sendEmail" {
		t.Fatalf("risk filter: %v", names(hs))
	}
	for _, h := range hs {
		if h.Contract.RiskLevel != contracts.RiskWrite {
			t.Errorf("risk filter let %s (%s) through", h.Tool, h.Contract.RiskLevel)
		}
	}
	hs, err = r.Search(ctx, "weather forecast email", SearchOptions{K: 10, Services: []string{"mail", "files"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		if h.Contract.Service != "mail" && h.Contract.Service != "files" {
			t.Errorf("service filter let %s through", h.Tool)
		}
	}
	if !slices.Contains(names(hs), "mail.sendEmail") {
		t.Errorf("service filter dropped a mail tool: %v", names(hs))
	}
	hs, err = r.Search(ctx, "weather forecast", SearchOptions{Services: []string{"weather"}, Risk: []contracts.Risk{contracts.RiskRead}})
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) == 0 || hs[0].Tool != "weather.getForecast" {
		t.Fatalf("single service+risk filter: %v", names(hs))
	}
}

func TestBoostAndAvoid(t *testing.T) {
	r := newIndex(t, Options{}, catalog()...)
	ctx := context.Background()
	q := "weather forecast and air quality"
	plain, err := r.Search(ctx, q, SearchOptions{K: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain) != 2 || plain[0].Score != 1 {
		t.Fatalf("plain search %v, want 2 hits, the best holding its part of the request", names(plain))
	}
	second := plain[1].Tool
	boosted, err := r.Search(ctx, q, SearchOptions{K: 2, Boost: map[string]float64{second: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if boosted[0].Tool != second {
		t.Fatalf("boost did not lift %s: %v", second, names(boosted))
	}
	avoided, err := r.Search(ctx, q, SearchOptions{K: 5, Avoid: []string{plain[0].Tool}})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(names(avoided), plain[0].Tool) || len(avoided) == 0 {
		t.Fatalf("avoid kept %s: %v", plain[0].Tool, names(avoided))
	}
}

func TestResultCountEdgeCases(t *testing.T) {
	ctx := context.Background()
	empty := newIndex(t, Options{})
	hs, err := empty.Search(ctx, "anything at all", SearchOptions{K: 5})
	if err != nil || len(hs) != 0 {
		t.Fatalf("empty index: %v, %v", hs, err)
	}
	one := newIndex(t, Options{}, catalog()[0])
	hs, err = one.Search(ctx, "weather forecast", SearchOptions{K: 50})
	if err != nil || len(hs) != 1 {
		t.Fatalf("k > count: %v, %v", hs, err)
	}
	// Candidates larger than the collection are fine.
	rk := DefaultRanking()
	rk.Candidates = 1000
	small := newIndex(t, Options{Ranking: rk}, catalog()...)
	if _, err := small.Search(ctx, "weather", SearchOptions{K: 3, Avoid: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	got, err := small.Recommend(ctx, "weather email message calendar search translate", 0)
	if err != nil || len(got) != 5 {
		t.Fatalf("k=0 means the default 5: %v, %v", got, err)
	}
}

func TestBadInputIsCodedAndChangesNothing(t *testing.T) {
	r := newIndex(t, Options{}, catalog()...)
	ctx := context.Background()
	checks := []struct {
		name  string
		err   error
		code  contracts.Code
		field string
	}{
		{"empty query", second(r.Search(ctx, "  ?! ", SearchOptions{})), contracts.CodeInvalidInput, "query"},
		{"negative k", second(r.Search(ctx, "weather", SearchOptions{K: -1})), contracts.CodeInvalidInput, "k"},
		{"bad risk", second(r.Search(ctx, "weather", SearchOptions{Risk: []contracts.Risk{"lethal"}})), contracts.CodeInvalidInput, "risk"},
		{"negative recommend k", second(r.Recommend(ctx, "weather", -2)), contracts.CodeInvalidInput, "k"},
		{"nameless contract", r.Upsert(ctx, tool("ok.new", "ok", "fine", contracts.RiskRead), contracts.Contract{Description: "no name"}), contracts.CodeInvalidContract, "tool"},
		{"unknown change", r.Apply(ctx, Change{Kind: 99}), contracts.CodeInvalidInput, "kind"},
		{"bad ranking", second(New(Options{Ranking: Ranking{K1: 1, B: 2, Candidates: 1}})), contracts.CodeInvalidConfig, "b"},
		{"bad diversity", second(New(Options{Ranking: Ranking{K1: 1, Candidates: 1, Diversity: 1.5}})), contracts.CodeInvalidConfig, "diversity"},
		{"shares above 1", second(New(Options{Ranking: Ranking{K1: 1, Candidates: 1, VectorWeight: 0.5, LikelihoodWeight: 0.6, Mu: 1}})), contracts.CodeInvalidConfig, "likelihood_weight"},
		{"likelihood without mu", second(New(Options{Ranking: Ranking{K1: 1, Candidates: 1, LikelihoodWeight: 0.2}})), contracts.CodeInvalidConfig, "mu"},
	}
	for _, c := range checks {
		var e *contracts.Error
		if !errors.As(c.err, &e) || e.Code != c.code || e.Details["field"] != c.field {
			t.Errorf("%s: got %v, want code %d naming %q", c.name, c.err, c.code, c.field)
		}
	}
	if r.Stats().Tools != len(catalog()) {
		t.Fatalf("a rejected upsert changed the index: %d tools", r.Stats().Tools)
	}
}

func second[T any](_ T, err error) error { return err }

func TestIncrementalReindexAndPersistence(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cs := catalog()
	r := newIndex(t, Options{Dir: dir}, cs...)
	if got := r.Stats().Embedded; got != int64(len(cs)) {
		t.Fatalf("first build embedded %d, want %d", got, len(cs))
	}
	// Same catalog again: nothing to embed.
	if err := r.Upsert(ctx, cs...); err != nil {
		t.Fatal(err)
	}
	if got := r.Stats().Embedded; got != int64(len(cs)) {
		t.Fatalf("re-upserting unchanged tools embedded %d more", got-int64(len(cs)))
	}

	// Restart on the persisted directory: nothing is re-embedded, search works.
	r2 := newIndex(t, Options{Dir: dir})
	if st := r2.Stats(); st.Tools != len(cs) || st.Embedded != 0 || st.Rebuilt {
		t.Fatalf("after restart: %+v", st)
	}
	if err := r2.Upsert(ctx, cs...); err != nil {
		t.Fatal(err)
	}
	if got := r2.Stats().Embedded; got != 0 {
		t.Fatalf("restart + unchanged catalog embedded %d tools", got)
	}
	hs, err := r2.Search(ctx, "send an email", SearchOptions{K: 1})
	if err != nil || len(hs) != 1 || hs[0].Tool != "mail.sendEmail" || hs[0].Contract.RiskLevel != contracts.RiskWrite {
		t.Fatalf("search after restart: %v, %v", hs, err)
	}

	// A changed description re-embeds exactly that tool; a risk-only change
	// re-embeds nothing but is visible.
	changed := cs[5]
	changed.Description = "Search invoices and receipts by vendor"
	risky := cs[0]
	risky.RiskLevel = contracts.RiskWrite
	if err := r2.Apply(ctx, Change{Kind: Changed, Contract: changed}); err != nil {
		t.Fatal(err)
	}
	if err := r2.Apply(ctx, Change{Kind: Changed, Contract: risky}); err != nil {
		t.Fatal(err)
	}
	if got := r2.Stats().Embedded; got != 1 {
		t.Fatalf("one changed description embedded %d tools", got)
	}
	got, err := r2.Recommend(ctx, "find receipts from a vendor", 1)
	if err != nil || got[0] != "files.searchFiles" {
		t.Fatalf("changed tool not found by its new text: %v, %v", got, err)
	}

	// Hot add and remove through Apply; both survive a restart.
	added := tool("stock.getQuote", "stock", "Stock price quote for a ticker symbol", contracts.RiskRead)
	if err := r2.Apply(ctx, Change{Kind: Added, Contract: added}); err != nil {
		t.Fatal(err)
	}
	if err := r2.Apply(ctx, Change{Kind: Removed, Tool: "mail.deleteEmail"}); err != nil {
		t.Fatal(err)
	}
	if err := r2.Apply(ctx, Change{Kind: Removed, Tool: "mail.deleteEmail"}); err != nil {
		t.Fatalf("repeated removal: %v", err)
	}
	r3 := newIndex(t, Options{Dir: dir})
	if st := r3.Stats(); st.Tools != len(cs) || st.Embedded != 0 {
		t.Fatalf("after second restart: %+v", st)
	}
	top, err := r3.Search(ctx, "price of a stock ticker", SearchOptions{K: 1})
	if err != nil || top[0].Tool != "stock.getQuote" {
		t.Fatalf("hot-added tool after restart: %v, %v", top, err)
	}
	if top[0].Contract.Description != added.Description {
		t.Fatalf("contract not round-tripped: %+v", top[0].Contract)
	}
	hs, _ = r3.Search(ctx, "delete email", SearchOptions{K: 10})
	if slices.Contains(names(hs), "mail.deleteEmail") {
		t.Fatal("removed tool came back after restart")
	}
	hs, _ = r3.Search(ctx, "weather", SearchOptions{K: 10, Services: []string{"weather"}})
	for _, h := range hs {
		if h.Tool == "weather.getForecast" && h.Contract.RiskLevel != contracts.RiskWrite {
			t.Fatal("risk-only change lost on restart")
		}
	}
}

func TestEmbedderChangeRebuildsIndex(t *testing.T) {
	dir := t.TempDir()
	cs := catalog()
	newIndex(t, Options{Dir: dir}, cs...)
	other := embed.NewHashed(embed.HashedOptions{Dim: 128})
	r := newIndex(t, Options{Dir: dir, Embedder: other})
	st := r.Stats()
	if !st.Rebuilt || st.Embedded != int64(len(cs)) || st.Tools != len(cs) || st.Identity != other.Identity() {
		t.Fatalf("after embedder change: %+v", st)
	}
	got, err := r.Recommend(context.Background(), "weather forecast for Rome", 1)
	if err != nil || got[0] != "weather.getForecast" {
		t.Fatalf("rebuilt index search: %v, %v", got, err)
	}
	// Reopening with the same new embedder does not rebuild again.
	again := newIndex(t, Options{Dir: dir, Embedder: embed.NewHashed(embed.HashedOptions{Dim: 128})})
	if st := again.Stats(); st.Rebuilt || st.Embedded != 0 {
		t.Fatalf("second open rebuilt: %+v", st)
	}
}

// TestConcurrentSearchAndUpsert: searches run while tools are changed and
// removed and the index file is written (run with -race).
func TestConcurrentSearchAndUpsert(t *testing.T) {
	r := newIndex(t, Options{Dir: t.TempDir()}, catalog()...)
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		for i := 0; i < 50; i++ {
			c := tool("extra.tool", "extra", "extra weather helper", contracts.RiskRead)
			c.Description += string(rune('a' + i%26))
			if err := r.Upsert(ctx, c); err != nil {
				done <- err
				return
			}
		}
		done <- r.Remove(ctx, "extra.tool")
	}()
	for i := 0; i < 50; i++ {
		if _, err := r.Search(ctx, "weather forecast", SearchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
