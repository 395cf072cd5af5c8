package contracts

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

// TestPinCoversEveryContractField: changing any field of a contract but
// the tool's name (and service) changes its hash and exactly the pin part that holds
// the field; a field added to Contract without a part fails here.
func TestPinCoversEveryContractField(t *testing.T) {
	base := Contract{
		Tool: "files.move", Service: "files", Description: "Moves a file.", RiskLevel: RiskWrite,
		ScopesRequired: []string{"files:write"}, Tags: []string{TagPII},
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"from":{"type":"string"},"token":{"type":"string"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"moved":{"type":"string"}}}`),
		ProducesMap:  map[string]string{"moved_to": "$.moved"}, TimeoutMS: 1000,
	}
	change := map[string]struct {
		part string
		set  func(*Contract)
	}{
		"Description":       {PartDescription, func(c *Contract) { c.Description = "Moves a file and deletes the source." }},
		"RiskLevel":         {PartRisk, func(c *Contract) { c.RiskLevel = RiskDestructive }},
		"ScopesRequired":    {PartRisk, func(c *Contract) { c.ScopesRequired = nil }},
		"Tags":              {PartAnnotations, func(c *Contract) { c.Tags = []string{TagPII, TagDelete} }},
		"InputSchema":       {PartInputSchema, func(c *Contract) { c.InputSchema = json.RawMessage(`{"type":"object"}`) }},
		"OutputSchema":      {PartOutputSchema, func(c *Contract) { c.OutputSchema = json.RawMessage(`{"type":"object"}`) }},
		"ProducesMap":       {PartOutputSchema, func(c *Contract) { c.ProducesMap = map[string]string{"moved_to": "$"} }},
		"TimeoutMS":         {PartAnnotations, func(c *Contract) { c.TimeoutMS = 2000 }},
		"Idempotent":        {PartAnnotations, func(c *Contract) { c.Idempotent = true }},
		"IdempotentWithKey": {PartAnnotations, func(c *Contract) { c.IdempotentWithKey = true }},
		"SecretFields":      {PartInputSchema, func(c *Contract) { c.SecretFields = []string{"token"} }},
	}
	old := mustTool(t, base).Pin()
	if len(old.Parts) != len(PinParts) || old.Changed(mustTool(t, base).Pin()) != nil {
		t.Fatalf("pin %+v is not stable", old)
	}
	fields := reflect.TypeFor[Contract]()
	for i := range fields.NumField() {
		name := fields.Field(i).Name
		if name == "Tool" || name == "Service" { // the tool's name, which starts with its service
			continue
		}
		ch, ok := change[name]
		if !ok {
			t.Errorf("Contract.%s is in no pin part: add it to Tool.Pin and here", name)
			continue
		}
		c := base
		ch.set(&c)
		now := mustTool(t, c).Pin()
		if now.Hash == old.Hash || !slices.Equal(old.Changed(now), []string{ch.part}) {
			t.Errorf("%s changed: hash %s -> %s, parts %v; want [%s]", name, old.Hash, now.Hash, old.Changed(now), ch.part)
		}
	}
	// A pin without parts (cut short) says every part may have changed.
	if got := (ContractPin{Hash: "x"}).Changed(old); !slices.Equal(got, PinParts) {
		t.Errorf("partless pin: %v", got)
	}
}

func mustTool(t *testing.T, c Contract) *Tool {
	t.Helper()
	tool, err := NewTool(c)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}
