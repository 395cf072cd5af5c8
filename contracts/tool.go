package contracts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/theory/jsonpath"
)

// Tool is a checked contract with its schemas and produces_map paths
// compiled once, so validation on every call is cheap and a broken
// contract is refused when the tool is added, not when it is first used.
type Tool struct {
	Contract Contract
	hash     string
	input    *jsonschema.Schema
	output   *jsonschema.Schema
	// inputFast and outputFast tell most valid values at a glance (nil
	// when the schema is beyond them; see fastSchema).
	inputFast  *fastSchema
	outputFast *fastSchema
	paths      map[string]*jsonpath.Path
	// props and required are the input schema's top-level properties and
	// required list, read once for the engine's payload binding.
	props    map[string]bool
	required []string
}

var (
	toolNamePattern    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)+$`)
	serviceNamePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$`)
	knownTags          = []string{TagPII, TagExternalSend, TagFinancial, TagAdmin, TagDelete, TagSharePublic}
)

// NewTool checks c and compiles it. Every refusal is CodeInvalidContract
// with details "tool" and "field" naming what is broken.
func NewTool(c Contract) (*Tool, error) {
	bad := func(field, format string, args ...any) error {
		return Errorf(CodeInvalidContract, "tool %q: %s: "+format, append([]any{c.Tool, field}, args...)...).
			With("tool", c.Tool).With("field", field)
	}
	if !toolNamePattern.MatchString(c.Tool) {
		return nil, bad("tool", "want service.name (letters, digits, _ and -, dot-separated)")
	}
	if !serviceNamePattern.MatchString(c.Service) {
		return nil, bad("service", "%q is not a service name", c.Service)
	}
	if !strings.HasPrefix(c.Tool, c.Service+".") {
		return nil, bad("service", "tool name does not start with %q", c.Service+".")
	}
	switch c.RiskLevel {
	case RiskRead, RiskWrite, RiskDestructive:
	default:
		return nil, bad("risk_level", "%q is not one of read, write, destructive", c.RiskLevel)
	}
	for _, tag := range c.Tags {
		if !slices.Contains(knownTags, tag) {
			return nil, bad("tags", "unknown tag %q (want one of %s)", tag, strings.Join(knownTags, ", "))
		}
	}
	for _, s := range c.ScopesRequired {
		if strings.TrimSpace(s) == "" {
			return nil, bad("scopes_required", "empty scope")
		}
	}
	for _, s := range c.SecretFields {
		if s == "" {
			return nil, bad("secret_fields", "empty field name")
		}
	}
	if c.TimeoutMS < 0 || c.TimeoutMS > MaxTimeoutMS {
		return nil, bad("timeout_ms", "%d is not within 0..%d (a day)", c.TimeoutMS, MaxTimeoutMS)
	}
	t := &Tool{Contract: c, hash: c.Hash(), paths: make(map[string]*jsonpath.Path, len(c.ProducesMap))}
	var err error
	if len(c.InputSchema) == 0 {
		return nil, bad("input_schema", "missing (use {} to accept any input)")
	}
	if t.input, err = compileSchema("ordo:///tools/"+c.Tool+"/input_schema.json", c.InputSchema); err != nil {
		return nil, schemaCompileError(c.Tool, "input_schema", err)
	}
	if len(c.OutputSchema) == 0 {
		return nil, bad("output_schema", "missing (use {} to accept any result)")
	}
	if t.output, err = compileSchema("ordo:///tools/"+c.Tool+"/output_schema.json", c.OutputSchema); err != nil {
		return nil, schemaCompileError(c.Tool, "output_schema", err)
	}
	t.inputFast, t.outputFast = compileFast(c.InputSchema), compileFast(c.OutputSchema)
	t.props, t.required = schemaFields(c.InputSchema)
	// The schema's own secret marks count as secret_fields, and a listed
	// path counts as its top-level field (the hash stays the contract's as
	// sent, which the host compares).
	if secret := secretFields(c.SecretFields, t.props, c.InputSchema); !slices.Equal(secret, c.SecretFields) {
		t.Contract.SecretFields = secret
	}
	for _, key := range slices.Sorted(maps.Keys(c.ProducesMap)) {
		if key == "" {
			return nil, bad("produces_map", "empty state key")
		}
		p, err := jsonpath.Parse(c.ProducesMap[key])
		if err != nil {
			return nil, Errorf(CodeInvalidContract, "tool %q: produces_map[%q]: %w", c.Tool, key, err).
				With("tool", c.Tool).With("field", "produces_map."+key)
		}
		t.paths[key] = p
	}
	return t, nil
}

// Name is the tool id, "service.name".
func (t *Tool) Name() string { return t.Contract.Tool }

// Hash is the contract's content hash (Contract.Hash), computed once when
// the tool was compiled.
func (t *Tool) Hash() string { return t.hash }

// Hash is the contract's content hash, the hex SHA-256 of its JSON
// encoding (fields in declaration order, maps by sorted key, schemas
// compacted). It is the one test of whether a tool changed: the catalog
// compares it, carries it on its events, and its subscribers compare the
// carried value instead of the contracts. Schema keys are hashed in the
// order the tool wrote them, so reordering them counts as a change (a
// spurious re-index at worst, never a missed change).
func (c Contract) Hash() string {
	b, err := json.Marshal(c)
	if err != nil { // a schema that is not JSON (NewTool refuses it): hash what is there
		b = fmt.Appendf(nil, "%#v", c)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ValidateInput checks a payload against the input schema (CodeSchemaViolation).
func (t *Tool) ValidateInput(payload any) error {
	if t.inputFast.accepts(payload) {
		return nil
	}
	return t.check(t.input, payload, CodeSchemaViolation, "input")
}

// ValidateOutput checks a result against the output schema (CodeToolInvalidOutput).
func (t *Tool) ValidateOutput(result any) error {
	if t.outputFast.accepts(result) {
		return nil
	}
	return t.check(t.output, result, CodeToolInvalidOutput, "output")
}

// InputJSONValid reports whether JSON text is surely a payload
// ValidateInput accepts, read without decoding it (the host passes
// payloads on as text). False is "not sure": decode it and ValidateInput
// says what is wrong, if anything.
func (t *Tool) InputJSONValid(data []byte) bool { return t.inputFast.accepts(json.RawMessage(data)) }

// OutputJSONValid is InputJSONValid for a result and ValidateOutput.
func (t *Tool) OutputJSONValid(data []byte) bool { return t.outputFast.accepts(json.RawMessage(data)) }

// check validates v; side ("input", "output") names it in an error only,
// so a valid value costs no message (this runs on every tool call).
func (t *Tool) check(sch *jsonschema.Schema, v any, code Code, side string) error {
	jv, err := jsonValue(v)
	if err != nil {
		return Errorf(code, "%s of %s: %w", side, t.Name(), err).With("tool", t.Name())
	}
	if err := sch.Validate(jv); err != nil {
		var secret []string
		if sch == t.input {
			secret = t.Contract.SecretFields
		}
		return AsError(schemaError(err, code, side+" of "+t.Name(), secret)).With("tool", t.Name())
	}
	return nil
}

// InputFields returns the input schema's top-level properties and its
// required list (empty when the schema is not an object schema). The
// caller must not change them.
func (t *Tool) InputFields() (props map[string]bool, required []string) {
	return t.props, t.required
}

// schemaFields reads an object schema's top-level properties and required list.
func schemaFields(schema json.RawMessage) (map[string]bool, []string) {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	props := make(map[string]bool, len(s.Properties))
	for k := range s.Properties {
		props[k] = true
	}
	return props, s.Required
}

// CanProduce reports whether the produces_map yields key.
func (t *Tool) CanProduce(key string) bool {
	_, ok := t.paths[key]
	return ok
}

// Produce applies the whole produces_map to a result: the state updates.
func (t *Tool) Produce(result any) (map[string]any, error) {
	return t.ProduceKeys(result, slices.Sorted(maps.Keys(t.paths)))
}

// ProduceKeys applies only the named keys of the produces_map, for an
// action that declares a subset. A path matching one node yields its
// value, several nodes a list, none CodeMissingPath naming the key. A key
// the map lacks is CodeUnproducibleKey. On error nothing is returned.
func (t *Tool) ProduceKeys(result any, keys []string) (map[string]any, error) {
	v, err := jsonValue(result)
	if err != nil {
		return nil, Errorf(CodeToolInvalidOutput, "result of %s: %w", t.Name(), err).With("tool", t.Name())
	}
	out := make(map[string]any, len(keys))
	for _, key := range keys {
		p, ok := t.paths[key]
		if !ok {
			return nil, Errorf(CodeUnproducibleKey, "tool %s has no produces_map entry for %q", t.Name(), key).
				With("tool", t.Name()).With("key", key)
		}
		nodes := p.Select(v)
		switch len(nodes) {
		case 0:
			path := t.Contract.ProducesMap[key]
			return nil, Errorf(CodeMissingPath, "result of %s has nothing at %s for %q", t.Name(), path, key).
				With("tool", t.Name()).With("key", key).With("path", path)
		case 1:
			out[key] = nodes[0]
		default:
			out[key] = []any(nodes)
		}
	}
	return out, nil
}

// Catalog finds tools by name; the host's live catalog implements it.
type Catalog interface {
	Lookup(name string) (*Tool, bool)
}
