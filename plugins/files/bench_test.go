package files

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ordo-run/ordo/plugins/internal/plugintest"
)

// BenchmarkList10 lists 10 entries of a directory of 100 and of 100,000:
// the directory is read only until it has more than 10, so the two cost
// about the same (reading and sorting it whole made the large one 648
// times dearer).
func BenchmarkList10(b *testing.B) {
	list := func(b *testing.B, s *plugintest.Tools) {
		for b.Loop() {
			s.Call("files.list", map[string]any{"path": "dir", "max_entries": 10}, "")
		}
	}
	b.Run("dir=100", func(b *testing.B) { list(b, benchTools(b, 100, 0)) })
	b.Run("dir=100000", func(b *testing.B) { list(b, benchTools(b, 100000, 0)) })
}

// BenchmarkWriteMaxBytes appends a byte to a file in a root of 10,000
// files with the size limit off and on: with it, every write that grows
// the root walks it.
func BenchmarkWriteMaxBytes(b *testing.B) {
	appendByte := func(b *testing.B, s *plugintest.Tools) {
		for b.Loop() {
			s.Call("files.write", map[string]any{"path": "w.txt", "content": "x", "mode": "append"}, "")
		}
	}
	b.Run("max_bytes=0", func(b *testing.B) { appendByte(b, benchTools(b, 10000, 0)) })
	b.Run("max_bytes=1GiB", func(b *testing.B) { appendByte(b, benchTools(b, 10000, 1<<30)) })
}

// benchTools serves the files tools, with a size limit of maxBytes, over
// a root whose directory dir holds n empty files.
func benchTools(b *testing.B, n int, maxBytes int64) *plugintest.Tools {
	base := b.TempDir()
	cfg := Config{Root: filepath.Join(base, "root"), DataDir: filepath.Join(base, "data"), MaxBytes: maxBytes}
	dir := filepath.Join(cfg.Root, "dir")
	for _, d := range []string{dir, cfg.DataDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%06d", i)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	tools, err := Tools(cfg)
	return plugintest.Server(b, tools, err)
}
