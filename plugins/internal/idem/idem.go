package idem

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"

	"github.com/ordo-run/ordo/plugins/internal/toolerr"
)

// Record is what one idempotency key remembers.
type Record struct {
	Key         string          `json:"key"` // tool name, "/", the caller's key
	PayloadHash string          `json:"payload_sha256"`
	Result      json.RawMessage `json:"result"`
}

// Stamp identifies one call; the effect turns its result into a Record.
type Stamp struct {
	key, hash string
}

// Keyed reports whether the call carried an idempotency key, i.e. whether
// the effect must persist the record it returns.
func (s Stamp) Keyed() bool { return s.key != "" }

// Record makes the call's record holding result.
func (s Stamp) Record(result any) (Record, error) {
	data, err := json.Marshal(result)
	if err != nil {
		return Record{}, err
	}
	return Record{Key: s.key, PayloadHash: s.hash, Result: data}, nil
}

// Guard runs side effects at most once per (tool, key). Calls through one
// Guard are serialised, which also keeps a plugin's own store consistent.
type Guard struct {
	mu   sync.Mutex
	seen map[string]Record
}

// NewGuard starts a Guard that remembers recs (loaded from where the plugin
// persisted them).
func NewGuard(recs []Record) *Guard {
	g := &Guard{seen: make(map[string]Record, len(recs))}
	for _, r := range recs {
		g.seen[r.Key] = r
	}
	return g
}

// Do returns the result remembered for (tool, key), or runs effect and
// remembers the Record it returns. When the stamp is keyed, effect must
// persist that record with its side effect before returning. An empty key
// runs effect every time. A key reused with a different payload is refused
// (field idempotency_key), since returning the other call's result would
// be a lie. The result is returned as decoded JSON (json.Number numbers),
// the same shape on the first call as on a replay.
func (g *Guard) Do(tool, key string, payload map[string]any, effect func(Stamp) (Record, error)) (any, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var s Stamp
	if key != "" {
		canon, err := json.Marshal(payload) // map keys sorted: a canonical form
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(canon)
		s = Stamp{key: tool + "/" + key, hash: hex.EncodeToString(sum[:])}
		if r, ok := g.seen[s.key]; ok {
			if r.PayloadHash != s.hash {
				return nil, toolerr.Refuse("idempotency_key", "idempotency key %q was already used for a different %s call", key, tool)
			}
			return decode(r.Result)
		}
	}
	r, err := effect(s)
	if err != nil {
		return nil, err
	}
	if s.Keyed() {
		g.seen[s.key] = r
	}
	return decode(r.Result)
}

func decode(data json.RawMessage) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}
