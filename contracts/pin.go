package contracts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// ContractPin is the contract of one tool as a plan version was checked
// against it (PlanRevision.Pins): its hash (Tool.Hash), the one test of a
// change, and a short hash of each part a person reads (PinParts), so a
// change can say which parts changed. Short part hashes are for telling
// parts apart only; whether the contract changed is Hash's to say.
type ContractPin struct {
	Hash  string            `json:"hash"`
	Parts map[string]string `json:"parts,omitempty"`
}

// The parts of a contract a pin tells apart. Every Contract field but the
// tool's name and its service (the name's prefix) is in one
// (TestPinCoversEveryContractField).
const (
	PartDescription  = "description"
	PartInputSchema  = "input_schema"  // with secret_fields
	PartOutputSchema = "output_schema" // with produces_map
	PartRisk         = "risk"          // risk_level, scopes_required
	PartAnnotations  = "annotations"   // tags, timeout, idempotency
)

// PinParts lists the parts in the order a change names them.
var PinParts = []string{PartDescription, PartInputSchema, PartOutputSchema, PartRisk, PartAnnotations}

// Pin is the tool's ContractPin now.
func (t *Tool) Pin() ContractPin {
	c := t.Contract
	parts := map[string]any{
		PartDescription:  c.Description,
		PartInputSchema:  []any{c.InputSchema, c.SecretFields},
		PartOutputSchema: []any{c.OutputSchema, c.ProducesMap},
		PartRisk:         []any{c.RiskLevel, c.ScopesRequired},
		PartAnnotations:  []any{c.Tags, c.TimeoutMS, c.Idempotent, c.IdempotentWithKey},
	}
	p := ContractPin{Hash: t.hash, Parts: make(map[string]string, len(parts))}
	for name, v := range parts {
		b, err := json.Marshal(v)
		if err != nil { // a schema that is not JSON (NewTool refuses it): hash what is there
			b = fmt.Appendf(nil, "%#v", v)
		}
		sum := sha256.Sum256(b)
		p.Parts[name] = hex.EncodeToString(sum[:6])
	}
	return p
}

// Changed lists the parts in which now differs from p, in PinParts order:
// every part when either pin lacks its parts, none when the hashes agree.
func (p ContractPin) Changed(now ContractPin) []string {
	if p.Hash == now.Hash {
		return nil
	}
	var out []string
	for _, part := range PinParts {
		if p.Parts[part] == "" || p.Parts[part] != now.Parts[part] {
			out = append(out, part)
		}
	}
	return out
}

// ContractChange is one tool whose contract is no longer the one a plan
// version is pinned to (a contract_changed interrupt, a re-pin).
type ContractChange struct {
	Tool    string      `json:"tool"`
	Actions []string    `json:"actions"`          // the plan's actions not yet done that call it
	Fields  []string    `json:"fields,omitempty"` // the parts that changed (PinParts)
	Old     ContractPin `json:"old"`
	New     ContractPin `json:"new"`
	// Description is the tool's new description, when it changed.
	Description string `json:"description,omitempty"`
}
