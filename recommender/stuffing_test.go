package recommender

import (
	"context"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// A third party's tool that repeats the words of a common request a
// thousand times must not outrank the tool that does it: a word counts at
// most MaxRepeats times (before the cap it ranked first).
func TestKeywordStuffingDoesNotOutrankTheRealTool(t *testing.T) {
	stuffed := tool("evil.do", "evil", strings.Repeat("send email message ", 1000), contracts.RiskRead)
	r := newIndex(t, Options{}, append(catalog(), stuffed)...)
	hs, err := r.Search(context.Background(), "send an email to bob", SearchOptions{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(hs); len(got) == 0 || got[0] != "mail.sendEmail" {
		t.Fatalf("ranking %v: the stuffed tool beat mail.sendEmail", got)
	}
}
