package mcpsource

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
)

// toolSet is one tools/list turned into contracts.
type toolSet struct {
	contracts []contracts.Contract
	upstream  map[string]string // catalog id -> upstream tool name
	skipped   []host.SkippedTool
	hash      string // of the upstream's raw list: an unchanged re-list signals nothing (whether a tool changed is the catalog's contract hash)
}

// State keys every upstream tool's produces_map offers besides its output
// schema's top-level properties.
const (
	KeyResult = "result" // the whole result
	KeyText   = "text"   // the text content, for tools without an output schema
)

var (
	badNameChars = regexp.MustCompile(`[^A-Za-z0-9_-]`)
	identPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	permissive   = json.RawMessage(`{}`)
)

// MaxTools bounds the tools one upstream adds: a list of tiny tools as
// long as a message may be (jsonbound.MaxMessage) holds 75,000, which take
// seconds to convert and compile at every change of the list, and no
// planner or MCP client can choose among them. Those after the first
// MaxTools by name are skipped (one entry in skipped says how many).
const MaxTools = 1000

// buildTools makes contracts for tools. Names already valid keep their
// spelling; others have every character outside [A-Za-z0-9_-] replaced by
// "_" and, if that collides, a short hash of the original name appended,
// so ids are stable whatever order the upstream lists its tools in.
func buildTools(source string, tools []mcp.Tool, overrides map[string]host.ToolOverride) toolSet {
	set := toolSet{upstream: map[string]string{}, hash: hashTools(tools)}
	byName := map[string]mcp.Tool{}
	for _, t := range tools {
		if _, dup := byName[t.Name]; dup || t.Name == "" {
			set.skipped = append(set.skipped, host.SkippedTool{Tool: t.Name, Error: "empty or duplicate tool name"})
			continue
		}
		byName[t.Name] = t
	}
	names := slices.Sorted(maps.Keys(byName))
	if len(names) > MaxTools { // one entry for them all: they may be many
		set.skipped = append(set.skipped, host.SkippedTool{Tool: names[MaxTools],
			Error: fmt.Sprintf("this tool and the %d after it by name: the upstream lists more than %d tools", len(names)-MaxTools-1, MaxTools)})
		names = names[:MaxTools]
	}
	ids := map[string]string{}
	taken := map[string]bool{}
	for _, pass := range []bool{true, false} {
		for _, n := range names {
			clean := badNameChars.ReplaceAllString(n, "_")
			if (clean == n) != pass {
				continue
			}
			id := source + "." + clean
			if taken[id] {
				sum := sha256.Sum256([]byte(n))
				id += "-" + hex.EncodeToString(sum[:3])
			}
			taken[id] = true
			ids[n] = id
		}
	}
	for _, n := range names {
		t, id := byName[n], ids[n]
		c, err := contractFor(source, id, t, override(overrides, n, id))
		if err == nil {
			_, err = contracts.NewTool(c)
		}
		if err != nil {
			set.skipped = append(set.skipped, host.SkippedTool{Tool: n, Error: err.Error()})
			continue
		}
		set.contracts = append(set.contracts, c)
		set.upstream[id] = n
	}
	return set
}

// override finds the override for an upstream tool by its upstream name or
// its catalog id.
func override(o map[string]host.ToolOverride, name, id string) host.ToolOverride {
	if v, ok := o[name]; ok {
		return v
	}
	return o[id]
}

func contractFor(source, id string, t mcp.Tool, o host.ToolOverride) (contracts.Contract, error) {
	in := mcp.ToolArgumentsSchema(t.InputSchema)
	if in.Type == "" {
		in.Type = "object"
	}
	input, err := json.Marshal(in)
	if err != nil {
		return contracts.Contract{}, fmt.Errorf("input schema: %w", err)
	}
	output, produces := permissive, map[string]string{KeyResult: "$", KeyText: "$.text"}
	if t.OutputSchema.Type != "" {
		if output, err = json.Marshal(mcp.ToolArgumentsSchema(t.OutputSchema)); err != nil {
			return contracts.Contract{}, fmt.Errorf("output schema: %w", err)
		}
		produces = map[string]string{}
		for p := range t.OutputSchema.Properties {
			if identPattern.MatchString(p) {
				produces[p] = "$." + p
			}
		}
		if _, ok := produces[KeyResult]; !ok {
			produces[KeyResult] = "$"
		}
	}
	c := contracts.Contract{
		Tool:           id,
		Service:        source,
		Description:    describeTool(source, t),
		RiskLevel:      riskOf(t.Annotations),
		ScopesRequired: o.Scopes,
		Tags:           o.Tags,
		InputSchema:    input,
		OutputSchema:   output,
		ProducesMap:    produces,
		TimeoutMS:      o.TimeoutMS,
		SecretFields:   o.SecretFields, // and those the schema marks (contracts.NewTool)
		Idempotent:     isTrue(t.Annotations.IdempotentHint) || isTrue(t.Annotations.ReadOnlyHint),
	}
	if o.Risk != "" {
		c.RiskLevel = o.Risk
	}
	return c, nil
}

// riskOf maps MCP annotations to a risk level: readOnlyHint -> read,
// destructiveHint -> destructive, anything else -> write. (The MCP spec's
// default for a missing destructiveHint is true; Ordo follows issue 9 and
// treats an unannotated tool as write: override it in config to be
// stricter.)
func riskOf(a mcp.ToolAnnotation) contracts.Risk {
	switch {
	case isTrue(a.ReadOnlyHint):
		return contracts.RiskRead
	case isTrue(a.DestructiveHint):
		return contracts.RiskDestructive
	}
	return contracts.RiskWrite
}

func isTrue(b *bool) bool { return b != nil && *b }

func describeTool(source string, t mcp.Tool) string {
	title := t.Title
	if title == "" {
		title = t.Annotations.Title
	}
	switch {
	case t.Description != "" && title != "":
		return title + ": " + t.Description
	case t.Description != "":
		return t.Description
	case title != "":
		return title
	}
	return fmt.Sprintf("Tool %q of the MCP server %q.", t.Name, source)
}

func hashTools(tools []mcp.Tool) string {
	sorted := slices.Clone(tools)
	slices.SortFunc(sorted, func(a, b mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	b, err := json.Marshal(sorted)
	if err != nil { // a tool mcp-go cannot re-encode: hash what we can see
		b = fmt.Appendf(nil, "%v", sorted)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// resultValue turns a successful tools/call answer into the step's result:
// the structured content when there is some, otherwise {"text": all text
// blocks joined by newlines}, plus "content" holding any non-text blocks
// (images, resources) as the upstream sent them.
func resultValue(res *mcp.CallToolResult) (json.RawMessage, error) {
	if len(res.RawStructuredContent) > 0 && string(res.RawStructuredContent) != "null" {
		return res.RawStructuredContent, nil
	}
	if res.StructuredContent != nil {
		return json.Marshal(res.StructuredContent)
	}
	text, other := splitContent(res.Content)
	out := map[string]any{KeyText: text}
	if len(other) > 0 {
		out["content"] = other
	}
	return json.Marshal(out)
}

func splitContent(content []mcp.Content) (string, []mcp.Content) {
	var texts []string
	var other []mcp.Content
	for _, c := range content {
		if t, ok := mcp.AsTextContent(c); ok {
			texts = append(texts, t.Text)
			continue
		}
		other = append(other, c)
	}
	return strings.Join(texts, "\n"), other
}

// maxErrorText bounds the upstream text copied into an error message.
const maxErrorText = 2000

// toolError is an isError answer as a non-retryable CodeToolFailed whose
// message is the upstream's text, so the verifier and re-planner see why.
func toolError(source, id string, res *mcp.CallToolResult) *contracts.Error {
	text, _ := splitContent(res.Content)
	if text == "" {
		text = "the upstream reported an error without text"
	}
	if len(text) > maxErrorText {
		text = text[:maxErrorText] + "…"
	}
	e := contracts.Errorf(contracts.CodeToolFailed, "%s: %s", id, text).With("tool", id).With("upstream", source)
	if len(res.RawStructuredContent) > 0 {
		e = e.With("structured_content", res.RawStructuredContent)
	}
	return e
}
