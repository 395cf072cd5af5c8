package recommender

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/recommender/tokenize"
)

// TestLikelihood checks the Dirichlet query likelihood against the formula
// worked by hand, and that removing a tool takes its words out of the
// collection statistics.
func TestLikelihood(t *testing.T) {
	x := newBM25(Ranking{NameWeight: 1, ParamWeight: 1})
	addText(x, "a", fields{Description: "weather forecast"})
	addText(x, "b", fields{Description: "weather alerts alerts city"})
	addText(x, "c", fields{Description: "email"})
	slots := []int{x.slots["a"], x.slots["b"]}
	const mu = 2.0
	got, known := x.likelihood(tokenize.Words("weather forecast"), mu, slots)
	if known != 2 {
		t.Fatalf("known words = %d, want 2", known)
	}
	// Collection: 7 words; weather 2, forecast 1. Both words are known.
	pw, pf := 2.0/7, 1.0/7
	want := []float64{
		math.Log(1+1/(mu*pw)) + math.Log(1+1/(mu*pf)) + 2*math.Log(mu/(2+mu)),
		math.Log(1+1/(mu*pw)) + 2*math.Log(mu/(4+mu)),
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("likelihood[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if got[0] <= got[1] {
		t.Fatalf("the tool holding both words should lead: %v", got)
	}

	// Removing b leaves the statistics of an index that never had it.
	x.remove("b")
	fresh := newBM25(Ranking{NameWeight: 1, ParamWeight: 1})
	addText(fresh, "a", fields{Description: "weather forecast"})
	addText(fresh, "c", fields{Description: "email"})
	after, _ := x.likelihood(tokenize.Words("weather forecast alerts"), mu, []int{x.slots["a"]})
	ref, _ := fresh.likelihood(tokenize.Words("weather forecast alerts"), mu, []int{fresh.slots["a"]})
	if math.Abs(after[0]-ref[0]) > 1e-12 {
		t.Fatalf("after removal %v, fresh index %v", after[0], ref[0])
	}
	if id := x.ids[tokenize.Stem("alerts")]; len(x.postings[id]) != 0 || x.cf[id] != 0 {
		t.Fatal("a removed tool's only word is still counted")
	}
}

// TestScaledLikelihoodDoesNotCollapse: two tools sharing the same single
// word with nearly equal lengths both score near 1; min-max made them 1
// and 0. A tool of the same evidence but far longer falls below.
func TestScaledLikelihoodDoesNotCollapse(t *testing.T) {
	x := newBM25(Ranking{NameWeight: 1, ParamWeight: 1})
	addText(x, "a", fields{Description: "weather forecast city"})
	addText(x, "b", fields{Description: "weather forecast city today"})
	addText(x, "c", fields{Description: "weather " + strings.Repeat("padding words here ", 20)})
	for i := range 20 {
		addText(x, fmt.Sprint("other", i), fields{Description: "send email message"})
	}
	q := x.scaledLikelihood(tokenize.Words("weather"), 1000, []int{x.slots["a"], x.slots["b"]})
	if q[0] != 1 || q[1] < 0.9 {
		t.Fatalf("two close matches scaled to %v, want 1 and near 1", q)
	}
	q = x.scaledLikelihood(tokenize.Words("weather"), 1000, []int{x.slots["a"], x.slots["b"], x.slots["c"]})
	if q[2] >= q[1] || q[2] < 0 {
		t.Fatalf("the long tool scaled to %v, want below the others and not negative", q)
	}
}

// addText indexes a tool's text as Upsert does.
func addText(x *bm25, tool string, f fields) {
	words, _ := fieldWords(f)
	x.add(tool, x.intern(words))
}
