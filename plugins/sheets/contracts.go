package sheets

import (
	"encoding/json"

	"github.com/ordo-run/ordo/contracts"
)

const fileSchema = `{"type":"string","minLength":1,"pattern":"(?i)\\.(csv|tsv)$","description":"a .csv or .tsv file relative to the sheets root"}`

var (
	getRangeContract = contracts.Contract{
		Tool: "sheets.get_range", Service: "sheets", RiskLevel: contracts.RiskRead, Idempotent: true,
		Description: "Read a range of cells (A1 notation like A1:C10, A:C or 2:5; the whole sheet if omitted) from a CSV/TSV sheet as rows of strings.",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["file"],"properties":{
			"file":` + fileSchema + `,
			"range":{"type":"string","minLength":1,"description":"A1 notation; omit for the whole sheet"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["rows","range","row_count"],"properties":{
			"rows":{"type":"array","items":{"type":"array","items":{"type":"string"}}},
			"range":{"type":"string","description":"the cells returned, in A1 notation; empty when none"},
			"row_count":{"type":"integer","minimum":0}}}`),
		ProducesMap: map[string]string{"rows": "$.rows"},
		TimeoutMS:   10000,
	}
	queryContract = contracts.Contract{
		Tool: "sheets.query", Service: "sheets", RiskLevel: contracts.RiskRead, Idempotent: true,
		Description: "Query a CSV/TSV sheet whose first row is the header: filter rows with a where clause (e.g. status = done and amount >= 100), pick columns, get records as objects.",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["file"],"properties":{
			"file":` + fileSchema + `,
			"where":{"type":"string","description":"conditions 'column op value' joined by and; ops = != < <= > >= contains startswith endswith"},
			"select":{"type":"array","items":{"type":"string"},"description":"header names to return; all if omitted"},
			"limit":{"type":"integer","minimum":1,"maximum":10000,"default":1000}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["records","columns","count","truncated"],"properties":{
			"records":{"type":"array","items":{"type":"object","additionalProperties":{"type":"string"}}},
			"columns":{"type":"array","items":{"type":"string"}},
			"count":{"type":"integer","minimum":0},"truncated":{"type":"boolean"}}}`),
		ProducesMap: map[string]string{"records": "$.records"},
		TimeoutMS:   10000,
	}
)

// Contracts are the contracts Tools serves, known without opening
// anything: what a host lists while the plugin's process starts.
func Contracts() []contracts.Contract {
	return []contracts.Contract{getRangeContract, queryContract}
}
