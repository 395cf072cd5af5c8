package semantic

import (
	"strings"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// separator marks a word start in SentencePiece pieces ("▁the").
const separator = '\u2581'

// reserved pieces (unknown, <s>, </s>, three extras) are never matched.
const reserved = 6

// Tokenizer cuts text into the encoder's vocabulary pieces by the Viterbi
// search of the JavaScript tokenizer it ports (@energetic-ai/embeddings
// 0.2.0), quirks included, so ids match the model's: NFKC, spaces become
// "▁", a character no piece starts with is the unknown id 0 (runs of
// unknowns merge into one), and the best path maximises the pieces' log
// probabilities.
type Tokenizer struct {
	pieces []string
	scores []float32
	lens   []int // each piece's length in UTF-16 units, as JS counts it
	root   *trieNode
}

type trieNode struct {
	next  map[rune]*trieNode
	id    int // piece ending here, or -1
	runes int
}

// NewTokenizer builds the trie of pieces (ids below reserved are skipped).
func NewTokenizer(pieces []string, scores []float32) *Tokenizer {
	t := &Tokenizer{pieces: pieces, scores: scores, lens: make([]int, len(pieces)), root: &trieNode{id: -1}}
	for i, p := range pieces {
		t.lens[i] = len(utf16.Encode([]rune(p)))
		if i < reserved {
			continue
		}
		n := t.root
		rs := []rune(p)
		for _, r := range rs {
			c := n.next[r]
			if c == nil {
				if n.next == nil {
					n.next = map[rune]*trieNode{}
				}
				c = &trieNode{id: -1}
				n.next[r] = c
			}
			n = c
		}
		n.id, n.runes = i, len(rs)
	}
	return t
}

// Encode returns the piece ids of s.
func (t *Tokenizer) Encode(s string) []int {
	s = norm.NFKC.String(s)
	if s == "" {
		return nil
	}
	syms := []rune(string(separator) + strings.ReplaceAll(s, " ", string(separator)))
	n := len(syms)
	best := make([]float64, n+1)
	words := make([]int, n+1)
	// JS collects every arc by end position and relaxes each end's arcs in
	// ascending start order. Relaxing forward, start by start, visits the
	// arcs of every end in that same order, and best[i] is final when start
	// i is reached (every arc into i starts before it).
	relax := func(start, end, id int, sc float64) {
		score := sc + best[start]
		if best[end] == 0 || score >= best[end] {
			best[end] = score
			words[end] = id
		}
	}
	for i := range syms {
		matched := false
		node := t.root.next[syms[i]]
		for j := i; node != nil; j++ {
			if node.id >= 0 {
				relax(i, i+node.runes, node.id, float64(t.scores[node.id]))
				matched = true
			}
			if j+1 >= n {
				break
			}
			node = node.next[syms[j+1]]
		}
		if !matched {
			relax(i, i+1, 0, 0) // unknown: one symbol, score 0
		}
	}
	var ids []int
	for it := n; it > 0; {
		ids = append(ids, words[it])
		it -= t.lens[words[it]]
	}
	out := ids[:0]
	prevUnk := false
	for _, id := range ids {
		if !(prevUnk && id == 0) {
			out = append(out, id)
		}
		prevUnk = id == 0
	}
	for a, b := 0, len(out)-1; a < b; a, b = a+1, b-1 {
		out[a], out[b] = out[b], out[a]
	}
	return out
}
