package notes

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ordo-run/ordo/plugins/internal/plugintest"
)

// BenchmarkCreatePage measures one keyed create_page (through the SDK's
// validation) on stores of increasing size: every change rewrites and
// fsyncs the whole file, so the cost grows with the store.
func BenchmarkCreatePage(b *testing.B) {
	for _, size := range []int{0, 1000} {
		b.Run(fmt.Sprintf("store=%d", size), func(b *testing.B) {
			dir := b.TempDir()
			seedStore(b, dir, size)
			tools, err := Tools(Config{DataDir: dir})
			n := plugintest.Server(b, tools, err)
			for i := 0; b.Loop(); i++ {
				n.Call("notes.create_page", map[string]any{"title": "page", "content": "some text"}, fmt.Sprint("k-", i))
			}
		})
	}
}

// BenchmarkGetPage measures one get_page on a store of 1000 pages: every
// read first checks whether another process replaced the store file.
func BenchmarkGetPage(b *testing.B) {
	dir := b.TempDir()
	id := seedStore(b, dir, 1000)
	tools, err := Tools(Config{DataDir: dir})
	n := plugintest.Server(b, tools, err)
	for b.Loop() {
		n.Call("notes.get_page", map[string]any{"page_id": id}, "")
	}
}

// seedStore writes a store of size pages into dir and returns a page id.
func seedStore(b testing.TB, dir string, size int) string {
	seed := &snapshot{Version: storeVersion, Pages: map[string]Page{}}
	var id string
	for i := range size {
		pg := Page{ID: newID("page_"), Title: fmt.Sprint("seed ", i), Blocks: []Block{{ID: newID("blk_"), Type: "paragraph", Text: "some text"}}}
		seed.Pages[pg.ID], id = pg, pg.ID
	}
	data, _ := json.Marshal(seed)
	if err := os.WriteFile(filepath.Join(dir, storeName), data, 0o600); err != nil {
		b.Fatal(err)
	}
	return id
}
