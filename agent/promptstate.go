package agent

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// DefaultPromptStateBytes bounds the run state one prompt shows a model
// (the re-planner's available_state, the composer's state, the filler's
// state_memory) where Config.PromptStateBytes is 0: a run may hold
// 64 MiB of state (MaxRunBytes), and a model is paid by the token.
const DefaultPromptStateBytes = 64 << 10

// truncatedKey names the object that stands, in a prompt, for a state
// value cut to fit: {"ordo_truncated": {"bytes": N, "head": "..."}}, the
// value's size in bytes and the start of its JSON text.
const truncatedKey = "ordo_truncated"

// stateLimit is the state bytes one prompt may show; <= 0: no bound.
func (e *Engine) stateLimit() int {
	if e.cfg.PromptStateBytes == 0 {
		return DefaultPromptStateBytes
	}
	return e.cfg.PromptStateBytes
}

// promptState is state as a prompt shows it, and whether anything was cut:
// the state itself when its keys and values fit in limit bytes (limit <= 0:
// always), so a small state goes to the model exactly as before. Else each
// value gets an equal share of what the smaller ones leave: one that fits
// its share is shown whole, a larger one as a truncatedKey object holding
// as much of its JSON text as the share leaves room for.
func promptState(state map[string]json.RawMessage, limit int) (map[string]json.RawMessage, bool) {
	size := func(k string) int { return len(k) + len(state[k]) + 4 } // "k":v,
	total := 0
	for k := range state {
		total += size(k)
	}
	if limit <= 0 || total <= limit {
		return state, false
	}
	keys := slices.SortedFunc(maps.Keys(state), func(a, b string) int {
		return cmp.Or(cmp.Compare(size(a), size(b)), strings.Compare(a, b))
	})
	out := make(map[string]json.RawMessage, len(state))
	left := limit
	for i, k := range keys {
		share := left / (len(keys) - i)
		if n := size(k); n <= share {
			out[k], left = state[k], left-n
			continue
		}
		out[k] = truncatedValue(state[k], share-size(k)+len(state[k]))
		left -= min(share, left)
	}
	return out, true
}

// truncatedValue is the truncatedKey object for v in about room bytes:
// as much of v's JSON text as fits once escaped, cut where a character
// ends (nothing of it when room is too small even for the object).
func truncatedValue(v json.RawMessage, room int) json.RawMessage {
	head := room
	for {
		text := strings.ToValidUTF8(string(v[:max(0, min(head, len(v)))]), "")
		data, _ := json.Marshal(map[string]map[string]any{truncatedKey: {"bytes": len(v), "head": text}}) // a number and a valid string always encode
		if len(data) <= room || head <= 0 {
			return data
		}
		head = head*room/len(data) - 1 // escapes make text longer: shrink in proportion
	}
}
