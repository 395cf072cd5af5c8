package text

import (
	"encoding/json"

	"github.com/ordo-run/ordo/contracts"
)

// maxText bounds every text the tools produce.
const maxText = 1 << 20

var (
	templateContract = contracts.Contract{
		Tool: "text.template", Service: "text", RiskLevel: contracts.RiskRead, Idempotent: true,
		Description: "Fill a text template's {{key}} placeholders (dotted paths like {{page.url}} or {{rows.0.name}}) from given values; no LLM needed.",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["template","values"],"properties":{
			"template":{"type":"string","maxLength":100000},
			"values":{"type":"object","description":"the values placeholders refer to"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["text"],"properties":{"text":{"type":"string"}}}`),
		ProducesMap:  map[string]string{"text": "$.text"},
		TimeoutMS:    5000,
	}
	extractContract = contracts.Contract{
		Tool: "text.extract_json_field", Service: "text", RiskLevel: contracts.RiskRead, Idempotent: true,
		Description: "Pick a value out of JSON text (or a JSON object inside prose or a ```json fence) with an RFC 9535 JSONPath such as $.items[0].id.",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["json","path"],"properties":{
			"json":{"type":"string","minLength":1,"maxLength":4194304},
			"path":{"type":"string","minLength":1,"description":"RFC 9535 JSONPath, e.g. $.data.url"},
			"default":{"description":"returned when the path matches nothing; without it that is an error"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["value","found","count"],"properties":{
			"value":{"description":"one match as is, several as a list"},"found":{"type":"boolean"},"count":{"type":"integer","minimum":0}}}`),
		ProducesMap: map[string]string{"value": "$.value"},
		TimeoutMS:   5000,
	}
	joinContract = contracts.Contract{
		Tool: "text.join", Service: "text", RiskLevel: contracts.RiskRead, Idempotent: true,
		Description: "Join a list into one text with a separator (and optional prefix/suffix); with field, join that field of each record (e.g. names from sheets.query records).",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["items"],"properties":{
			"items":{"type":"array","maxItems":100000},
			"separator":{"type":"string","default":", "},
			"field":{"type":"string","minLength":1,"description":"take this key of each item (items must be objects)"},
			"prefix":{"type":"string"},"suffix":{"type":"string"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["text","count"],"properties":{
			"text":{"type":"string"},"count":{"type":"integer","minimum":0}}}`),
		ProducesMap: map[string]string{"text": "$.text"},
		TimeoutMS:   5000,
	}
)

// Contracts are the contracts Tools serves, known without opening
// anything: what a host lists while the plugin's process starts.
func Contracts() []contracts.Contract {
	return []contracts.Contract{templateContract, extractContract, joinContract}
}
