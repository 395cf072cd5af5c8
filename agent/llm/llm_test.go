package llm_test

import (
	"math"
	"testing"

	"github.com/ordo-run/ordo/agent/llm"
)

// Cached input tokens cost the cached price, or the input price when the
// model has none.
func TestPriceCost(t *testing.T) {
	u := llm.Usage{PromptTokens: 1_000_000, CachedTokens: 400_000, CompletionTokens: 100_000}
	half := 0.5
	for _, c := range []struct {
		p    llm.Price
		want float64
	}{
		{llm.Price{Input: 2, Output: 8, Cached: &half}, 0.6*2 + 0.4*0.5 + 0.1*8},
		{llm.Price{Input: 2, Output: 8}, 2 + 0.1*8},
		{llm.Price{}, 0},
	} {
		if got := c.p.Cost(u); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%+v: cost %v, want %v", c.p, got, c.want)
		}
	}
}
