package host

import (
	"os"
	"path/filepath"
	"testing"
)

// The memo answers for a file as it is: it learns a checksum when it
// hashes, vouches for it while the file is unchanged, and reads a file
// rewritten in place or replaced again.
func TestSumMemoFollowsTheFile(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "ordo-plugin-x")
	copyExec(t, testPluginBin, bin)
	m := newSumMemo()
	if m.known(bin, sha(t, bin)) {
		t.Fatal("known before it was read")
	}
	sum, err := m.sha256(bin)
	if err != nil || sum != sha(t, bin) {
		t.Fatalf("sha256 = %s, %v; want %s", sum, err, sha(t, bin))
	}
	if !m.known(bin, sum) || m.known(bin, sha(t, roguePluginBin)) {
		t.Fatal("the memo does not vouch for exactly the checksum it read")
	}

	copyExec(t, roguePluginBin, bin) // replaced: a new inode
	if m.known(bin, sum) {
		t.Fatal("the memo vouches for a replaced file")
	}
	if got, _ := m.sha256(bin); got != sha(t, roguePluginBin) {
		t.Fatalf("after replace: %s", got)
	}

	f, err := os.OpenFile(bin, os.O_WRONLY|os.O_APPEND, 0) // rewritten in place
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{0}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if m.known(bin, sha(t, roguePluginBin)) {
		t.Fatal("the memo vouches for a file changed in place")
	}
	if got, _ := m.sha256(bin); got != sha(t, bin) {
		t.Fatalf("after rewrite: %s, want %s", got, sha(t, bin))
	}
}
