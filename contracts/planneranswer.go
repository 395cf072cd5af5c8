package contracts

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SearchToolsMax is how many search phrases one tool search may hold.
const SearchToolsMax = 5

// searchToolsSchemaJSON is the other answer a planner may give when Ordo
// offers a tool search: phrases to search the catalog with, nothing else.
var searchToolsSchemaJSON = []byte(fmt.Sprintf(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["search_tools"],
  "properties": {
    "search_tools": {
      "type": "array",
      "minItems": 1,
      "maxItems": %d,
      "items": {"type": "string", "minLength": 1, "maxLength": 200, "pattern": "\\S"}
    }
  }
}`, SearchToolsMax))

const searchToolsSchemaURL = "https://ordo.run/schemas/search-tools.schema.json"

var searchToolsSchema = sync.OnceValue(func() *jsonschema.Schema {
	sch, err := compileSchema(searchToolsSchemaURL, searchToolsSchemaJSON)
	if err != nil {
		panic("contracts: search_tools schema does not compile: " + err.Error())
	}
	return sch
})

// plannerAnswerSchemaJSON is "an Action Plan, or a tool search": the plan
// schema's body and the search schema under anyOf, the plan's $defs kept
// at the root so its references still resolve.
var plannerAnswerSchemaJSON = sync.OnceValue(func() []byte {
	var plan map[string]any
	var search any
	if json.Unmarshal(planSchemaJSON, &plan) != nil || json.Unmarshal(searchToolsSchemaJSON, &search) != nil {
		panic("contracts: embedded schemas are not JSON")
	}
	defs := plan["$defs"]
	for _, k := range []string{"$schema", "$id", "$defs", "title"} {
		delete(plan, k)
	}
	b, err := json.Marshal(map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"$id":     "https://ordo.run/schemas/planner-answer.schema.json",
		"title":   "Ordo planner answer: an Action Plan, or a tool search",
		"anyOf":   []any{plan, search},
		"$defs":   defs,
	})
	if err != nil {
		panic(err)
	}
	return b
})

// PlannerAnswerSchema returns the schema of a planner answer when Ordo
// offers one tool search: an Action Plan, or {"search_tools": [...]}.
func PlannerAnswerSchema() []byte { return append([]byte(nil), plannerAnswerSchemaJSON()...) }

// ParsePlannerAnswer reads a planner's answer that may be a plan or a tool
// search. An object with a "search_tools" key is a search and must be
// exactly {"search_tools": [1..5 non-blank phrases]} (CodeSchemaViolation
// otherwise); phrases come back trimmed. Anything else is read by
// ParsePlan, with its errors.
func ParsePlannerAnswer(text []byte) (*Plan, []string, error) {
	raw, err := ExtractJSON(string(text))
	if err != nil {
		return nil, nil, err
	}
	v, err := DecodeJSON(raw)
	if err != nil {
		return nil, nil, err
	}
	obj, _ := v.(map[string]any)
	if _, search := obj["search_tools"]; !search {
		p, err := ParsePlan(raw)
		return p, nil, err
	}
	if err := validate(searchToolsSchema(), v, CodeSchemaViolation, "search_tools"); err != nil {
		return nil, nil, err
	}
	var s struct {
		SearchTools []string `json:"search_tools"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, nil, Errorf(CodeSchemaViolation, "search_tools does not decode: %w", err)
	}
	for i := range s.SearchTools {
		s.SearchTools[i] = strings.TrimSpace(s.SearchTools[i])
	}
	return nil, s.SearchTools, nil
}
