package recommender

import (
	"context"
	"fmt"
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

// A megabyte of distinct words in a description is indexed up to
// MaxFieldBytes: the tool's lexical words, and what the index file keeps
// of them, stay bounded (before, all 130,000 words were indexed).
func TestLongDescriptionIsIndexedBounded(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, "w%dx ", i)
	}
	r := newIndex(t, Options{}, append(catalog(), tool("evil.big", "evil", b.String(), contracts.RiskRead))...)
	words := r.lex.fields[r.lex.slots["evil.big"]]
	if n := len(words[1]); n == 0 || n > MaxFieldBytes/2 {
		t.Fatalf("%d description words indexed, want 1..%d", n, MaxFieldBytes/2)
	}
}
