package host

import "sync"

// sumMemo remembers the checksums of plugin binaries by path, each with
// the stamp (see fileStamp) of the file it was taken from, so a binary
// that has not changed is not read again: pin, the plugins directory scan
// and the check before each start all ask it, and a bundled plugin's
// binary, 20 MB and more, is hashed once per host, not three times, or
// not at all when the contract cache vouches for it (see sha256Of).
type sumMemo struct {
	mu sync.Mutex
	m  map[string]stampedSum
}

type stampedSum struct {
	stamp fileStamp
	sum   string
}

func newSumMemo() *sumMemo { return &sumMemo{m: map[string]stampedSum{}} }

// sha256 is PluginSHA256(path), read only when the file changed since
// the memo last learned its checksum.
func (s *sumMemo) sha256(path string) (string, error) {
	before, stamped := stampOf(path)
	if stamped {
		if sum, ok := s.lookup(path, before); ok {
			return sum, nil
		}
	}
	sum, err := PluginSHA256(path)
	if err != nil {
		return "", err
	}
	// A file written while it was read has no one checksum to remember.
	if after, ok := stampOf(path); stamped && ok && after == before {
		s.learn(path, before, sum)
	}
	return sum, nil
}

// known reports whether the file at path, as it is now, has checksum sum.
func (s *sumMemo) known(path, sum string) bool {
	st, ok := stampOf(path)
	if !ok {
		return false
	}
	got, ok := s.lookup(path, st)
	return ok && got == sum
}

func (s *sumMemo) lookup(path string, st fileStamp) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[path]
	return e.sum, ok && e.stamp == st
}

// learn records that the file at path, with stamp st, has checksum sum.
func (s *sumMemo) learn(path string, st fileStamp, sum string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[path] = stampedSum{stamp: st, sum: sum}
}
