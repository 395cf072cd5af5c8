package recommender

import "math"

// flat holds every tool's meaning vector (Options.Semantic) quantised to
// int8 in one slice, indexed by the lexical index's slot: the semantic list
// scans every tool, and int8 rows in one slice are a quarter of float32's
// memory and read in order. The index file stores the rows as they are.
type flat struct {
	dim   int
	data  []int8    // slot*dim .. (slot+1)*dim
	scale []float32 // slot -> value of one int8 step (0: no vector)
	// head repeats each row's first headDims values, rows side by side:
	// the first pass over every tool then reads one dense array instead
	// of a cache line from every row (it was memory-bound).
	head []int8
}

// headDims is the width of the semantic list's first pass (the static
// vectors' PCA orders dimensions by variance).
const headDims = 64

// grow makes room for slot, fixing the dimension on the first vector.
func (f *flat) grow(slot, dim int) {
	if f.dim == 0 {
		f.dim = dim
	}
	for len(f.scale) <= slot {
		f.scale = append(f.scale, 0)
		f.data = append(f.data, make([]int8, f.dim)...)
		f.head = append(f.head, make([]int8, f.headDims())...)
	}
}

func (f *flat) headDims() int { return min(headDims, f.dim) }

// quantise is v as int8 steps and the value of one step (0: v is zero).
func quantise(v []float32) ([]int8, float32) {
	var top float64
	for _, x := range v {
		top = max(top, math.Abs(float64(x)))
	}
	out := make([]int8, len(v))
	if top == 0 {
		return out, 0
	}
	step := top / 127
	for i, x := range v {
		out[i] = int8(math.Round(float64(x) / step))
	}
	return out, float32(step)
}

// headDot is the dot product of slot's first headDims values and a
// quantised query q (its first headDims), in q's steps times the row's:
// integer sums, the semantic list's first pass over every tool.
func (f *flat) headDot(slot int, q []int8) float64 {
	n := f.headDims()
	row := f.head[slot*n : (slot+1)*n : (slot+1)*n]
	q = q[:n:n]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= n; i += 4 {
		r, x := row[i:i+4:i+4], q[i:i+4:i+4]
		s0 += int32(x[0]) * int32(r[0])
		s1 += int32(x[1]) * int32(r[1])
		s2 += int32(x[2]) * int32(r[2])
		s3 += int32(x[3]) * int32(r[3])
	}
	for ; i < n; i++ {
		s0 += int32(q[i]) * int32(row[i])
	}
	return float64(s0+s1+s2+s3) * float64(f.scale[slot])
}

// has reports whether slot holds a vector.
func (f *flat) has(slot int) bool { return slot < len(f.scale) && f.scale[slot] != 0 }

// row is slot's quantised vector and the value of one step (0: none).
func (f *flat) row(slot int) ([]int8, float32) {
	if slot >= len(f.scale) {
		return nil, 0
	}
	return f.data[slot*f.dim : (slot+1)*f.dim], f.scale[slot]
}

// setQuantised stores an already quantised row (from the index file).
func (f *flat) setQuantised(slot int, row []int8, scale float32) {
	f.grow(slot, len(row))
	if len(row) != f.dim {
		return
	}
	copy(f.data[slot*f.dim:], row)
	copy(f.head[slot*f.headDims():], row[:f.headDims()])
	f.scale[slot] = scale
}

// set stores v at slot, growing the slices as slots are handed out.
func (f *flat) set(slot int, v []float32) {
	row, step := quantise(v)
	f.setQuantised(slot, row, step)
}

// clear forgets slot's vector (the slot is free).
func (f *flat) clear(slot int) {
	if slot < len(f.scale) {
		f.scale[slot] = 0
	}
}

// dot is the dot product of two vectors of one dimension (0 otherwise).
func dot(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return float64(s0 + s1 + s2 + s3)
}

// dot is q·v for slot's vector v (0 for a slot without one).
func (f *flat) dot(slot int, q []float32) float64 {
	if !f.has(slot) || len(q) != f.dim {
		return 0
	}
	row := f.data[slot*f.dim : (slot+1)*f.dim]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(q); i += 4 {
		s0 += q[i] * float32(row[i])
		s1 += q[i+1] * float32(row[i+1])
		s2 += q[i+2] * float32(row[i+2])
		s3 += q[i+3] * float32(row[i+3])
	}
	for ; i < len(q); i++ {
		s0 += q[i] * float32(row[i])
	}
	return float64((s0 + s1 + s2 + s3) * f.scale[slot])
}
