package semantic

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"unicode"
)

// static.bin: vocabulary pieces with their scores, then one int8 vector
// and scale per piece (format in internal/distil).
//
//go:embed static.bin
var staticBin []byte

// Static is the offline meaning embedder. It is safe for concurrent use.
type Static struct {
	tok   *Tokenizer
	dim   int
	data  []int8
	scale []float32
}

var loadStatic = sync.OnceValues(func() (*Static, error) { return parseStatic(staticBin) })

// NewStatic returns the embedded model, parsed once per process.
func NewStatic() (*Static, error) { return loadStatic() }

func parseStatic(b []byte) (*Static, error) {
	const magic = "ORDOSV1\n"
	if !bytes.HasPrefix(b, []byte(magic)) || len(b) < len(magic)+8 {
		return nil, errors.New("semantic: static.bin is not an ORDOSV1 file")
	}
	b = b[len(magic):]
	n := int(binary.LittleEndian.Uint32(b))
	dim := int(binary.LittleEndian.Uint32(b[4:]))
	b = b[8:]
	pieces := make([]string, n)
	scores := make([]float32, n)
	for i := range n {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l+4 {
			return nil, fmt.Errorf("semantic: static.bin truncated at piece %d", i)
		}
		pieces[i] = string(b[k : k+int(l)])
		b = b[k+int(l):]
		scores[i] = math.Float32frombits(binary.LittleEndian.Uint32(b))
		b = b[4:]
	}
	if len(b) != n*4+n*dim {
		return nil, fmt.Errorf("semantic: static.bin has %d vector bytes, want %d", len(b), n*4+n*dim)
	}
	s := &Static{tok: NewTokenizer(pieces, scores), dim: dim, scale: make([]float32, n), data: make([]int8, n*dim)}
	for i := range n {
		s.scale[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[i*4:]))
	}
	for i, v := range b[n*4:] {
		s.data[i] = int8(v)
	}
	return s, nil
}

// Identity names the model, its reduction and the text preparation.
func (s *Static) Identity() string {
	return fmt.Sprintf("semantic/static use-lite-0.2.0 v1 dim=%d sif=1e-3", s.dim)
}

// Tokenizer is the encoder's SentencePiece tokenizer.
func (s *Static) Tokenizer() *Tokenizer { return s.tok }

// Embed is the L2-normalised sum of the pieces' vectors of text, after
// identifiers are split into words (`getWeatherForecast` -> "get Weather
// Forecast"). A text of unknown pieces only (another script) is the zero
// vector: it means nothing to this model.
func (s *Static) Embed(text string) []float32 {
	v := make([]float32, s.dim)
	for _, id := range s.tok.Encode(prepare(text)) {
		sc := s.scale[id]
		if sc == 0 {
			continue
		}
		row := s.data[id*s.dim : (id+1)*s.dim]
		for k, x := range row {
			v[k] += sc * float32(x)
		}
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(norm))
	for k := range v {
		v[k] *= inv
	}
	return v
}

// EmbedDocuments embeds each text.
func (s *Static) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = s.Embed(t)
	}
	return out, nil
}

// EmbedQuery embeds a request the same way as a document.
func (s *Static) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	return s.Embed(text), nil
}

// prepare splits identifiers at case changes, underscores and dots so the
// pieces are the words a sentence would hold, and lower-cases a word's
// capitals after its first letter ("HTTPServer" -> "http server").
func prepare(text string) string {
	var b strings.Builder
	rs := []rune(text)
	for i, r := range rs {
		switch {
		case unicode.IsSpace(r):
			b.WriteByte(' ')
			continue
		case r == '_' || r == '.' && i+1 < len(rs) && unicode.IsLetter(rs[i+1]) && i > 0 && unicode.IsLetter(rs[i-1]):
			b.WriteByte(' ')
			continue
		case i > 0 && unicode.IsUpper(r) && (unicode.IsLower(rs[i-1]) ||
			unicode.IsUpper(rs[i-1]) && i+1 < len(rs) && unicode.IsLower(rs[i+1])):
			b.WriteByte(' ')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
