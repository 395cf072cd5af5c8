package contracts

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestNewToolRefusesBrokenFields(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(c *Contract)
		field  string
	}{
		{"no dot in tool", func(c *Contract) { c.Tool = "create_page" }, "tool"},
		{"tool starts with digit", func(c *Contract) { c.Tool = "1notion.create" }, "tool"},
		{"tool with space", func(c *Contract) { c.Tool = "notion.create page" }, "tool"},
		{"empty service", func(c *Contract) { c.Service = "" }, "service"},
		{"service is not the prefix", func(c *Contract) { c.Service = "slack" }, "service"},
		{"service is a partial prefix", func(c *Contract) { c.Service = "not" }, "service"},
		{"risk level", func(c *Contract) { c.RiskLevel = "dangerous" }, "risk_level"},
		{"empty risk level", func(c *Contract) { c.RiskLevel = "" }, "risk_level"},
		{"tag", func(c *Contract) { c.Tags = []string{"pii", "secret"} }, "tags"},
		{"scope", func(c *Contract) { c.ScopesRequired = []string{" "} }, "scopes_required"},
		{"secret field", func(c *Contract) { c.SecretFields = []string{""} }, "secret_fields"},
		{"timeout", func(c *Contract) { c.TimeoutMS = -1 }, "timeout_ms"},
		{"timeout past a day", func(c *Contract) { c.TimeoutMS = MaxTimeoutMS + 1 }, "timeout_ms"},
		{"input schema missing", func(c *Contract) { c.InputSchema = nil }, "input_schema"},
		{"input schema not JSON", func(c *Contract) { c.InputSchema = json.RawMessage(`{"type":`) }, "input_schema"},
		{"input schema bad type", func(c *Contract) { c.InputSchema = json.RawMessage(`{"type":"thing"}`) }, "input_schema"},
		{"input schema bad regex", func(c *Contract) { c.InputSchema = json.RawMessage(`{"pattern":"(?=x)"}`) }, "input_schema"},
		{"input schema remote ref", func(c *Contract) { c.InputSchema = json.RawMessage(`{"$ref":"https://example.com/s.json"}`) }, "input_schema"},
		{"input schema file ref", func(c *Contract) { c.InputSchema = json.RawMessage(`{"$ref":"file:///etc/passwd"}`) }, "input_schema"},
		{"output schema missing", func(c *Contract) { c.OutputSchema = nil }, "output_schema"},
		{"output schema not a schema", func(c *Contract) { c.OutputSchema = json.RawMessage(`42`) }, "output_schema"},
		{"produces_map bad path", func(c *Contract) { c.ProducesMap = map[string]string{"page_url": "url"} }, "produces_map.page_url"},
		{"produces_map unclosed", func(c *Contract) { c.ProducesMap = map[string]string{"page_id": "$.items["} }, "produces_map.page_id"},
		{"produces_map empty key", func(c *Contract) { c.ProducesMap = map[string]string{"": "$.id"} }, "produces_map"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := readContract(t, "notion.create_page")
			tc.break_(&c)
			tool, err := NewTool(c)
			if tool != nil {
				t.Fatal("got a tool from a broken contract")
			}
			e := wantCode(t, err, CodeInvalidContract)
			if e.Details["field"] != tc.field {
				t.Fatalf("field = %v, want %q (%v)", e.Details["field"], tc.field, err)
			}
		})
	}
}

func TestNewToolAcceptsSeedContracts(t *testing.T) {
	cat := testCatalog(t)
	notion, ok := cat.Lookup("notion.create_page")
	if !ok || notion.Name() != "notion.create_page" {
		t.Fatalf("lookup: %v %v", notion, ok)
	}
	if !notion.CanProduce("page_url") || notion.CanProduce("summary") {
		t.Fatal("CanProduce disagrees with produces_map")
	}
	if _, ok := cat.Lookup("notion.delete_page"); ok {
		t.Fatal("found a tool that is not there")
	}
	// Boolean schemas and an explicit older draft are schemas too.
	c := readContract(t, "notion.create_page")
	c.InputSchema = json.RawMessage(`true`)
	c.OutputSchema = json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`)
	if _, err := NewTool(c); err != nil {
		t.Fatal(err)
	}
}

func TestValidateInput(t *testing.T) {
	notion, _ := testCatalog(t).Lookup("notion.create_page")
	if err := notion.ValidateInput(map[string]any{"title": "회의 기록", "parent_id": "db"}); err != nil {
		t.Fatal(err)
	}
	// Raw JSON and Go structs are read as JSON.
	if err := notion.ValidateInput(json.RawMessage(`{"title":"t","parent_id":"p"}`)); err != nil {
		t.Fatal(err)
	}
	type payload struct {
		Title    string `json:"title"`
		ParentID string `json:"parent_id"`
	}
	if err := notion.ValidateInput(payload{"t", "p"}); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name     string
		payload  any
		instance string
		keyword  string
	}{
		{"missing required", map[string]any{"title": "t"}, "", "/required"},
		{"wrong type", map[string]any{"title": 3, "parent_id": "p"}, "/title", "/properties/title/type"},
		{"too short", map[string]any{"title": "", "parent_id": "p"}, "/title", "/properties/title/minLength"},
		{"extra field", map[string]any{"title": "t", "parent_id": "p", "x": 1}, "", "/additionalProperties"},
		{"not an object", []any{"t"}, "", "/type"},
		{"broken raw JSON", json.RawMessage(`{"title":`), "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := wantCode(t, notion.ValidateInput(tc.payload), CodeSchemaViolation)
			if e.Details["tool"] != "notion.create_page" {
				t.Fatalf("details %v lack the tool", e.Details)
			}
			if tc.keyword == "" {
				return
			}
			if e.Details["instance_location"] != tc.instance || e.Details["keyword_location"] != tc.keyword {
				t.Fatalf("details %v, want instance %q keyword %q", e.Details, tc.instance, tc.keyword)
			}
			vs, _ := e.Details["violations"].([]Violation)
			if len(vs) == 0 || vs[0].Message == "" {
				t.Fatalf("no violation message in %v", e.Details)
			}
		})
	}
}

func TestValidateOutputAssertsFormats(t *testing.T) {
	notion, _ := testCatalog(t).Lookup("notion.create_page")
	if err := notion.ValidateOutput(map[string]any{"id": "page_123", "url": "https://notion.so/page_123"}); err != nil {
		t.Fatal(err)
	}
	e := wantCode(t, notion.ValidateOutput(map[string]any{"id": "page_123", "url": "not a uri"}), CodeToolInvalidOutput)
	if e.Details["instance_location"] != "/url" || e.Details["keyword_location"] != "/properties/url/format" {
		t.Fatalf("details %v", e.Details)
	}
	sheets, _ := testCatalog(t).Lookup("sheets.get_range")
	wantCode(t, sheets.ValidateInput(map[string]any{"spreadsheet_id": "s", "range": "A1:B2", "since": "2026-13-45"}), CodeSchemaViolation)
	if err := sheets.ValidateInput(map[string]any{"spreadsheet_id": "s", "range": "A1:B2", "since": "2026-02-21"}); err != nil {
		t.Fatal(err)
	}
}

func TestProduce(t *testing.T) {
	cat := testCatalog(t)
	notion, _ := cat.Lookup("notion.create_page")
	got, err := notion.Produce(json.RawMessage(`{"id":"page_123","url":"https://notion.so/page_123"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"page_id": "page_123", "page_url": "https://notion.so/page_123"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}

	// A path matching several nodes yields the list of their values.
	sheets, _ := cat.Lookup("sheets.get_range")
	got, err = sheets.Produce(map[string]any{
		"values": []any{[]any{"a", 1}},
		"rows":   []any{map[string]any{"amount": 3}, map[string]any{"amount": 4.5}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if amounts, _ := got["amounts"].([]any); len(amounts) != 2 || amounts[0] != 3 || amounts[1] != 4.5 {
		t.Fatalf("amounts = %#v", got["amounts"])
	}

	// A path matching nothing names the key, and nothing is produced.
	got, err = notion.Produce(map[string]any{"id": "page_123"})
	e := wantCode(t, err, CodeMissingPath)
	if got != nil || e.Details["key"] != "page_url" || e.Details["path"] != "$.url" {
		t.Fatalf("got %v, details %v", got, e.Details)
	}
	// An empty match list (wildcard over nothing) is missing too.
	_, err = sheets.Produce(map[string]any{"values": []any{}, "rows": []any{}})
	if e := wantCode(t, err, CodeMissingPath); e.Details["key"] != "amounts" {
		t.Fatalf("details %v", e.Details)
	}

	// ProduceKeys extracts only what an action declares.
	got, err = notion.ProduceKeys(map[string]any{"url": "u"}, []string{"page_url"})
	if err != nil || !reflect.DeepEqual(got, map[string]any{"page_url": "u"}) {
		t.Fatalf("got %v, %v", got, err)
	}
	_, err = notion.ProduceKeys(map[string]any{"url": "u"}, []string{"summary"})
	wantCode(t, err, CodeUnproducibleKey)
}

func TestErrorsIsByCode(t *testing.T) {
	notion, _ := testCatalog(t).Lookup("notion.create_page")
	err := notion.ValidateInput(map[string]any{})
	if !errors.Is(err, &Error{Code: CodeSchemaViolation}) || errors.Is(err, &Error{Code: CodeCycle}) {
		t.Fatal("errors.Is does not match by code")
	}
	data, jerr := json.Marshal(AsError(err))
	if jerr != nil {
		t.Fatal(jerr)
	}
	var back map[string]any
	if err := json.Unmarshal(data, &back); err != nil || back["code"] != float64(CodeSchemaViolation) {
		t.Fatalf("JSON %s", data)
	}
}

// A violation inside a secret field names the keyword, never the value
// (a pattern or format message would quote it); other fields keep the
// library's message.
func TestSecretFieldViolationHidesTheValue(t *testing.T) {
	tl, err := NewTool(Contract{Tool: "vault.put", Service: "vault", Description: "d", RiskLevel: RiskWrite, SecretFields: []string{"token"},
		InputSchema: json.RawMessage(`{"type":"object","properties":{
		 "token":{"type":"string","pattern":"^[0-9]+$"},
		 "creds":{"type":"object"},
		 "mail":{"type":"string","format":"email"}}}`),
		OutputSchema: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	err = tl.ValidateInput(json.RawMessage(`{"token":"s3cret-value","mail":"not-a-mail"}`))
	raw, _ := json.Marshal(AsError(err))
	if strings.Contains(err.Error(), "s3cret") || strings.Contains(string(raw), "s3cret") {
		t.Fatalf("the secret leaks: %s", raw)
	}
	if !strings.Contains(string(raw), "fails pattern") || !strings.Contains(string(raw), "not-a-mail") {
		t.Fatalf("want the secret's keyword and the other field's message: %s", raw)
	}
}
