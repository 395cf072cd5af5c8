package recommender

import (
	"bufio"
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestIndexFileTornTail: a crash mid-append leaves part of a frame; the
// next start keeps every whole frame, cuts the rest off, and the cut
// tool comes back (embedded again) when the catalog offers it.
func TestIndexFileTornTail(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cs := catalog()
	newIndex(t, Options{Dir: dir}, cs[:4]...)
	path := filepath.Join(dir, indexFileName)
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	newIndex(t, Options{Dir: dir}, cs[4]) // appends one frame
	grown, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, grown[:len(grown)-7], 0o600); err != nil {
		t.Fatal(err)
	}
	r := newIndex(t, Options{Dir: dir})
	if st := r.Stats(); st.Tools != 4 || st.Embedded != 0 {
		t.Fatalf("after a torn append: %+v, want the 4 tools of the whole frame", st)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, whole) {
		t.Fatalf("torn tail not cut off: %d bytes, want %d", len(after), len(whole))
	}
	if err := r.Upsert(ctx, cs[:5]...); err != nil {
		t.Fatal(err)
	}
	if st := r.Stats(); st.Tools != 5 || st.Embedded != 1 {
		t.Fatalf("re-offered catalog: %+v, want the cut tool embedded again", st)
	}
	got, err := r.Recommend(ctx, "create a calendar event", 1)
	if err != nil || got[0] != cs[4].Tool {
		t.Fatalf("cut tool after re-offer: %v %v", got, err)
	}
}

// TestIndexFileCompacts: once most records are dead (a tool changed over
// and over, tools removed) the file is rewritten with the live tools, and
// a restart reads the same index back.
func TestIndexFileCompacts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r := newIndex(t, Options{Dir: dir}, catalog()...)
	c := catalog()[0]
	for i := range compactMin {
		c.Description = "Get the weather forecast for a city, version " + string(rune('a'+i%26)) + string(rune('a'+i/26%26))
		if err := r.Upsert(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Remove(ctx, "mail.deleteEmail"); err != nil {
		t.Fatal(err)
	}
	if r.file.records >= compactMin {
		t.Fatalf("%d records for %d tools after %d writes: not compacted", r.file.records, len(r.tools), compactMin+1)
	}
	want, _ := r.Recommend(ctx, "weather forecast version zz", 3)
	r2 := newIndex(t, Options{Dir: dir})
	if st := r2.Stats(); st.Tools != len(catalog())-1 || st.Embedded != 0 {
		t.Fatalf("after compaction and restart: %+v", st)
	}
	got, _ := r2.Recommend(ctx, "weather forecast version zz", 3)
	if !slices.Equal(got, want) {
		t.Fatalf("restart ranks %v, before %v", got, want)
	}
}

// TestIndexFileNotOurs: a file of another kind under the index's name is
// replaced by an empty index, not an error.
func TestIndexFileNotOurs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, indexFileName), []byte("not an index at all"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := newIndex(t, Options{Dir: dir}, catalog()...)
	r2 := newIndex(t, Options{Dir: dir})
	if st := r2.Stats(); st.Tools != len(catalog()) || r.Stats().Tools != len(catalog()) {
		t.Fatalf("after replacing a foreign file: %+v", st)
	}
}

// FuzzIndexFile: any bytes read as an index file replay without a panic
// into an index that still answers searches.
func FuzzIndexFile(f *testing.F) {
	dir := f.TempDir()
	r, err := New(Options{Dir: dir})
	if err == nil {
		err = r.Upsert(context.Background(), catalog()[:2]...)
	}
	if err == nil {
		err = r.Remove(context.Background(), catalog()[0].Tool)
	}
	if err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(dir, indexFileName))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(indexMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		x := &indexFile{}
		r, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		x.readFrames(bufio.NewReader(bytes.NewReader(data)), func(fr *frame) error {
			return r.replay(context.Background(), fr, map[string]Offer{})
		})
		if _, err := r.Recommend(context.Background(), "weather", 3); err != nil {
			t.Fatal(err)
		}
	})
}

// TestIndexFileOldFormat: a file of the previous format (no contract
// hashes) is dropped and rebuilt as the catalog offers its tools, and the
// rebuilt file lets the next start skip every re-offer by its stored hash.
func TestIndexFileOldFormat(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r := newIndex(t, Options{Dir: dir}, catalog()...)
	r.mu.RLock()
	old := r.frame(slices.Sorted(maps.Keys(r.tools)))
	r.mu.RUnlock()
	old.Format = indexFormat - 1
	for i := range old.Tools {
		old.Tools[i].Sum = ""
	}
	var b bytes.Buffer
	b.WriteString(indexMagic)
	if err := writeFrames(&b, slices.Values([]*frame{old}), new(int)); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, indexFileName)
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	r2 := newIndex(t, Options{Dir: dir})
	if st := r2.Stats(); st.Tools != 0 {
		t.Fatalf("an index file of format %d was read: %+v", indexFormat-1, st)
	}
	if err := r2.Upsert(ctx, catalog()...); err != nil {
		t.Fatal(err)
	}
	if st := r2.Stats(); st.Tools != len(catalog()) || st.Embedded != int64(len(catalog())) {
		t.Fatalf("rebuild: %+v", st)
	}
	rebuilt, _ := os.ReadFile(path)
	r3 := newIndex(t, Options{Dir: dir})
	offers := make([]Offer, 0, len(catalog()))
	for _, c := range catalog() {
		offers = append(offers, Offer{Contract: c, Hash: c.Hash()})
	}
	if err := r3.UpsertOffers(ctx, offers...); err != nil {
		t.Fatal(err)
	}
	if st := r3.Stats(); st.Tools != len(catalog()) || st.Embedded != 0 {
		t.Fatalf("restart after the rebuild: %+v", st)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, rebuilt) {
		t.Fatalf("re-offering unchanged tools wrote to the index file (%d bytes, was %d)", len(after), len(rebuilt))
	}
}
