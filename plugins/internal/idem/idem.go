package idem

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/ordo-run/ordo/plugins/internal/toolerr"
)

// Record is what one idempotency key remembers.
type Record struct {
	Key         string          `json:"key"` // tool name, "/", the caller's key
	PayloadHash string          `json:"payload_sha256"`
	Result      json.RawMessage `json:"result"`
}

// Stamp identifies one call: its scoped key (empty when the call carried
// none) and its payload's hash. The effect turns its result into a Record.
type Stamp struct {
	Key  string
	Hash string
	tool string
	own  string // the caller's key, for messages
}

// Keyed reports whether the call carried an idempotency key, i.e. whether
// the effect must persist the record it returns.
func (s Stamp) Keyed() bool { return s.Key != "" }

// Record makes the call's record holding result.
func (s Stamp) Record(result any) (Record, error) {
	data, err := json.Marshal(result)
	if err != nil {
		return Record{}, err
	}
	return Record{Key: s.Key, PayloadHash: s.Hash, Result: data}, nil
}

// Same refuses (field idempotency_key) a key reused with a payload whose
// hash is not this call's: returning the other call's result, or finishing
// its effect, would be a lie.
func (s Stamp) Same(hash string) error {
	if hash == s.Hash {
		return nil
	}
	return toolerr.Refuse("idempotency_key", "idempotency key %q was already used for a different %s call", s.own, s.tool)
}

// Guard runs side effects at most once per (tool, key). It holds no lock:
// the plugin serialises calls with its own lock (filelock, shared with the
// other processes using its data directory) and, under it, brings the
// Guard up to date with Remember before calling Do. A plugin whose effect
// must not run under that lock (chat: a slow webhook would stall every
// process) uses Lookup and Done instead, serialising calls per key itself.
type Guard struct {
	seen map[string]Record
}

// NewGuard starts a Guard that remembers recs (loaded from where the plugin
// persisted them).
func NewGuard(recs []Record) *Guard {
	g := &Guard{seen: make(map[string]Record, len(recs))}
	for _, r := range recs {
		g.Remember(r)
	}
	return g
}

// Remember adds a record persisted since (by this process or another).
func (g *Guard) Remember(r Record) { g.seen[r.Key] = r }

// NewStamp identifies a call to tool with key (empty: unkeyed) and payload.
func NewStamp(tool, key string, payload map[string]any) (Stamp, error) {
	s := Stamp{tool: tool, own: key}
	if key == "" {
		return s, nil
	}
	canon, err := json.Marshal(payload) // map keys sorted: a canonical form
	if err != nil {
		return s, err
	}
	sum := sha256.Sum256(canon)
	s.Key, s.Hash = tool+"/"+key, hex.EncodeToString(sum[:])
	return s, nil
}

// Lookup returns the result remembered for s's key and true, or false when
// the effect is still to run (always, unkeyed). A key reused with a
// different payload is refused (see Stamp.Same).
func (g *Guard) Lookup(s Stamp) (any, bool, error) {
	r, ok := g.seen[s.Key]
	if !s.Keyed() || !ok {
		return nil, false, nil
	}
	if err := s.Same(r.PayloadHash); err != nil {
		return nil, true, err
	}
	v, err := decode(r.Result)
	return v, true, err
}

// Done remembers r, the record of s's effect (persisted with it when
// keyed), and returns its result.
func (g *Guard) Done(s Stamp, r Record) (any, error) {
	if s.Keyed() {
		g.Remember(r)
	}
	return decode(r.Result)
}

// Do returns the result remembered for (tool, key), or runs effect and
// remembers the Record it returns. When the stamp is keyed, effect must
// persist that record with its side effect before returning. An empty key
// runs effect every time. A key reused with a different payload is refused
// (see Stamp.Same). The result is returned as decoded JSON (json.Number
// numbers), the same shape on the first call as on a replay.
func (g *Guard) Do(tool, key string, payload map[string]any, effect func(Stamp) (Record, error)) (any, error) {
	s, err := NewStamp(tool, key, payload)
	if err != nil {
		return nil, err
	}
	if v, done, err := g.Lookup(s); done || err != nil {
		return v, err
	}
	r, err := effect(s)
	if err != nil {
		return nil, err
	}
	return g.Done(s, r)
}

func decode(data json.RawMessage) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}
