package contracts

import (
	"encoding/json"
	"maps"
)

// Redacted replaces secret values in step records.
const Redacted = "[REDACTED]"

// Redact returns payload with the named top-level fields replaced by
// Redacted, so step records and audit trails never hold a contract's
// secret_fields. It never modifies payload. json.RawMessage in gives
// json.RawMessage out; a payload that is not an object is returned as is,
// and one that cannot be read at all becomes Redacted as a whole.
func Redact(payload any, secretFields []string) any {
	if len(secretFields) == 0 {
		return payload
	}
	raw, isRaw := payload.(json.RawMessage)
	v, err := jsonValue(payload)
	if err != nil {
		return Redacted // unreadable: hide it all rather than leak a secret
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return payload
	}
	out := maps.Clone(obj)
	changed := false
	for _, f := range secretFields {
		if _, ok := out[f]; ok {
			out[f] = Redacted
			changed = true
		}
	}
	if !isRaw {
		return out
	}
	if !changed {
		return raw
	}
	data, err := json.Marshal(out)
	if err != nil {
		return Redacted
	}
	return json.RawMessage(data)
}
