package notes

import (
	"encoding/json"

	"github.com/ordo-run/ordo/contracts"
)

const pageSchema = `{"type":"object","additionalProperties":false,
	"required":["id","url","title","content","blocks","created_at","updated_at"],"properties":{
	"id":{"type":"string"},"url":{"type":"string"},"title":{"type":"string"},"parent":{"type":"string"},
	"content":{"type":"string"},
	"blocks":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["id","type","text","created_at"],"properties":{
		"id":{"type":"string"},"type":{"type":"string"},"text":{"type":"string"},"created_at":{"type":"string","format":"date-time"}}}},
	"created_at":{"type":"string","format":"date-time"},"updated_at":{"type":"string","format":"date-time"}}}`

var (
	createPageContract = contracts.Contract{
		Tool: "notes.create_page", Service: "notes", RiskLevel: contracts.RiskWrite,
		Description: "Create a note page with a title, optional text content and an optional parent page; returns its id and ordo://notes/ URL.",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["title"],"properties":{
			"title":{"type":"string","minLength":1,"maxLength":2000},
			"content":{"type":"string","description":"initial text, stored as the first block"},
			"parent":{"type":"string","minLength":1,"description":"id or URL of the parent page"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["id","url","title","created_at"],"properties":{
			"id":{"type":"string"},"url":{"type":"string"},"title":{"type":"string"},"parent":{"type":"string"},
			"created_at":{"type":"string","format":"date-time"}}}`),
		ProducesMap:       map[string]string{"page_id": "$.id", "page_url": "$.url"},
		TimeoutMS:         10000,
		IdempotentWithKey: true, // the store keeps each key's first result (store.go)
	}
	getPageContract = contracts.Contract{
		Tool: "notes.get_page", Service: "notes", RiskLevel: contracts.RiskRead, Idempotent: true,
		Description: "Get a note page by id or URL: title, parent, blocks and their text joined as content.",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["page_id"],"properties":{
			"page_id":{"type":"string","minLength":1,"description":"page id or ordo://notes/ URL"}}}`),
		OutputSchema: json.RawMessage(pageSchema),
		ProducesMap:  map[string]string{"page_title": "$.title", "page_content": "$.content", "page_url": "$.url"},
		TimeoutMS:    10000,
	}
	queryPagesContract = contracts.Contract{
		Tool: "notes.query_pages", Service: "notes", RiskLevel: contracts.RiskRead, Idempotent: true,
		Description: "List note pages, oldest first, filtered by a case-insensitive title substring and/or a parent page.",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{
			"title_contains":{"type":"string","maxLength":2000,"description":"titles are at most 2000 characters"},
			"parent":{"type":"string","minLength":1,"description":"id or URL of the parent page"},
			"limit":{"type":"integer","minimum":1,"maximum":500,"default":50}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["records","count","truncated"],"properties":{
			"records":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["id","url","title","created_at","updated_at"],"properties":{
				"id":{"type":"string"},"url":{"type":"string"},"title":{"type":"string"},"parent":{"type":"string"},
				"created_at":{"type":"string","format":"date-time"},"updated_at":{"type":"string","format":"date-time"}}}},
			"count":{"type":"integer","minimum":0},"truncated":{"type":"boolean"}}}`),
		ProducesMap: map[string]string{"records": "$.records"},
		TimeoutMS:   10000,
	}
	appendBlockContract = contracts.Contract{
		Tool: "notes.append_block", Service: "notes", RiskLevel: contracts.RiskWrite,
		Description: "Append a block of text (paragraph, heading, bulleted_list_item, to_do or code) to the end of a note page.",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["page_id","text"],"properties":{
			"page_id":{"type":"string","minLength":1,"description":"page id or ordo://notes/ URL"},
			"text":{"type":"string"},
			"type":{"enum":["paragraph","heading","bulleted_list_item","to_do","code"],"default":"paragraph"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["block_id","page_id","url","block_count"],"properties":{
			"block_id":{"type":"string"},"page_id":{"type":"string"},"url":{"type":"string"},"block_count":{"type":"integer","minimum":1}}}`),
		ProducesMap:       map[string]string{"block_id": "$.block_id", "page_url": "$.url"},
		TimeoutMS:         10000,
		IdempotentWithKey: true,
	}
)

// Contracts are the contracts Tools serves, known without opening
// anything: what a host lists while the plugin's process starts.
func Contracts() []contracts.Contract {
	return []contracts.Contract{createPageContract, getPageContract, queryPagesContract, appendBlockContract}
}
