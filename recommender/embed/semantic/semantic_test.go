package semantic

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"
)

// readJSONL decodes one T per line of a testdata file.
func readJSONL[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func model(t testing.TB) *Static {
	t.Helper()
	s, err := NewStatic()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTokenizerMatchesJavaScript compares ids with the JavaScript
// tokenizer's, recorded by internal/distil/reference.js: unknown scripts,
// astral-plane characters, NFKC ligatures, runs of spaces, tabs.
func TestTokenizerMatchesJavaScript(t *testing.T) {
	tok := model(t).Tokenizer()
	recs := readJSONL[struct {
		Text string `json:"text"`
		IDs  []int  `json:"ids"`
	}](t, "testdata/tokens.jsonl")
	if len(recs) < 10 {
		t.Fatalf("only %d reference sentences", len(recs))
	}
	for _, r := range recs {
		if got := tok.Encode(r.Text); !slices.Equal(got, r.IDs) {
			t.Errorf("Encode(%q) = %v, JavaScript gives %v", r.Text, got, r.IDs)
		}
	}
}

func cosine(a, b []float32) float64 {
	var d, x, y float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		x += float64(a[i]) * float64(a[i])
		y += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(x*y)
}

// TestStaticAgreesWithEncoder: on triples that share no content word, the
// full encoder (recorded under Node) puts the related text nearer than the
// unrelated one; the static vectors must order every triple the same way.
func TestStaticAgreesWithEncoder(t *testing.T) {
	s := model(t)
	recs := readJSONL[struct {
		Anchor, Related, Unrelated string
		CosRelated                 float64 `json:"cos_related"`
		CosUnrelated               float64 `json:"cos_unrelated"`
	}](t, "testdata/triples.jsonl")
	for _, r := range recs {
		if r.CosRelated <= r.CosUnrelated {
			t.Fatalf("reference triple %q is not ordered by the encoder", r.Anchor)
		}
		a, rel, un := s.Embed(r.Anchor), s.Embed(r.Related), s.Embed(r.Unrelated)
		cr, cu := cosine(a, rel), cosine(a, un)
		t.Logf("%-36q related %.3f (encoder %.3f) unrelated %.3f (encoder %.3f)", r.Anchor, cr, r.CosRelated, cu, r.CosUnrelated)
		if cr <= cu {
			t.Errorf("%q: static related %.3f <= unrelated %.3f", r.Anchor, cr, cu)
		}
	}
}

// TestStaticVectors: unit length, deterministic, zero for a script the
// model does not know, and identifiers split into words.
func TestStaticVectors(t *testing.T) {
	s := model(t)
	v, err := s.EmbedQuery(context.Background(), "weather forecast for tomorrow")
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 256 || math.Abs(cosine(v, v)-1) > 1e-5 {
		t.Fatalf("want a unit 256-dim vector, got len %d", len(v))
	}
	docs, _ := s.EmbedDocuments(context.Background(), []string{"weather forecast for tomorrow", "오늘 회의록"})
	if !slices.Equal(docs[0], v) {
		t.Error("document and query vectors of one text differ")
	}
	for _, x := range docs[1] {
		if x != 0 {
			t.Fatal("a Korean text must have the zero vector (only unknown pieces)")
		}
	}
	if got := prepare("weather.getForecast HTTPServer snake_case"); got != "weather get forecast http server snake case" {
		t.Errorf("prepare = %q", got)
	}
	if c := cosine(s.Embed("getWeatherForecast"), s.Embed("get weather forecast")); c < 0.999 {
		t.Errorf("an identifier and its words differ: cosine %.4f", c)
	}
}

// FuzzTokenizer: any input tokenises without panic into valid ids, and
// the ids' pieces spell the NFKC text where no piece is unknown.
func FuzzTokenizer(f *testing.F) {
	for _, s := range []string{"What is the weather today?", "오늘 회의록", "😀 𝔘𝔫", "  a  ", "\xff\xfe", "ﬁ", ""} {
		f.Add(s)
	}
	tok := model(f).Tokenizer()
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.Encode(s)
		for _, id := range ids {
			if id < 0 || id >= len(tok.pieces) || (id > 0 && id < reserved) {
				t.Fatalf("Encode(%q) gave id %d", s, id)
			}
		}
		if s != "" && len(ids) == 0 {
			t.Fatalf("Encode(%q) gave no ids", s)
		}
	})
}
