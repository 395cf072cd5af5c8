package text

import (
	"context"
	"strings"

	"github.com/theory/jsonpath"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/internal/toolerr"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// Config is empty: the text tools need nothing. It exists so every bundled
// plugin is built the same way.
type Config struct{}

// ConfigFromEnv returns the (empty) configuration.
func ConfigFromEnv() (Config, error) { return Config{}, nil }

// ToolsFromEnv is ConfigFromEnv then Tools: what the plugin binary serves.
func ToolsFromEnv() ([]sdk.Tool, error) {
	cfg, err := ConfigFromEnv()
	if err != nil {
		return nil, err
	}
	return Tools(cfg)
}

// Tools returns the three text tools.
func Tools(Config) ([]sdk.Tool, error) {
	return []sdk.Tool{
		{Contract: templateContract, Handler: templateTool},
		{Contract: extractContract, Handler: extractTool},
		{Contract: joinContract, Handler: joinTool},
	}, nil
}

type templateIn struct {
	Template string `json:"template"`
}

func templateTool(_ context.Context, call sdk.Call) (any, error) {
	var in templateIn
	if err := call.Decode(&in); err != nil {
		return nil, err
	}
	t, err := ParseTemplate(in.Template)
	if err != nil {
		return nil, toolerr.Refuse("template", "%s", contracts.AsError(err).Message)
	}
	values, _ := call.Payload["values"].(map[string]any) // the schema requires an object
	text, missing, exceeded := t.Render(values, maxText)
	switch {
	case len(missing) > 0:
		return nil, toolerr.Refuse("values", "values lack %s, used by the template", strings.Join(missing, ", ")).With("missing", missing)
	case exceeded:
		return nil, toolerr.Refuse("template", "the text would be longer than %d bytes", maxText)
	}
	return map[string]any{"text": text}, nil
}

type extractIn struct {
	JSON string `json:"json"`
	Path string `json:"path"`
}

func extractTool(_ context.Context, call sdk.Call) (any, error) {
	var in extractIn
	if err := call.Decode(&in); err != nil {
		return nil, err
	}
	path, err := jsonpath.Parse(in.Path)
	if err != nil {
		return nil, toolerr.Refuse("path", "path %q is not an RFC 9535 JSONPath: %v", in.Path, err)
	}
	doc, err := parseJSON(in.JSON)
	if err != nil {
		return nil, toolerr.Refuse("json", "json holds no JSON value: %v", contracts.AsError(err).Message)
	}
	if err := boundPath(path, doc); err != nil {
		return nil, err
	}
	nodes := path.Select(doc)
	if tooBig(nodes) {
		return nil, toolerr.Refuse("path", "path %s selects more than %d bytes of JSON", in.Path, contracts.MaxMessageBytes).With("limit", contracts.MaxMessageBytes)
	}
	out := map[string]any{"found": len(nodes) > 0, "count": len(nodes)}
	switch len(nodes) {
	case 0:
		def, ok := call.Payload["default"]
		if !ok {
			return nil, toolerr.Refuse("path", "path %s matches nothing in json (give default to allow that)", in.Path)
		}
		out["value"] = def
	case 1:
		out["value"] = nodes[0]
	default:
		out["value"] = []any(nodes)
	}
	return out, nil
}

// parseJSON reads the text as JSON, or else the one JSON object inside
// prose or a fenced block (what an LLM step tends to return).
func parseJSON(text string) (any, error) {
	if v, err := contracts.DecodeJSON([]byte(text)); err == nil {
		return v, nil
	}
	obj, err := contracts.ExtractJSON(text)
	if err != nil {
		return nil, err
	}
	return contracts.DecodeJSON(obj)
}

type joinIn struct {
	Separator *string `json:"separator"`
	Field     string  `json:"field"`
	Prefix    string  `json:"prefix"`
	Suffix    string  `json:"suffix"`
}

func joinTool(_ context.Context, call sdk.Call) (any, error) {
	var in joinIn
	if err := call.Decode(&in); err != nil {
		return nil, err
	}
	items := call.Payload["items"].([]any) // the schema requires an array
	sep := ", "
	if in.Separator != nil {
		sep = *in.Separator
	}
	parts := make([]string, len(items))
	size := len(in.Prefix) + len(in.Suffix)
	for i, item := range items {
		if in.Field != "" {
			obj, ok := item.(map[string]any)
			if !ok {
				return nil, toolerr.Refuse("items", "items[%d] is not an object, so it has no field %q", i, in.Field)
			}
			if item, ok = obj[in.Field]; !ok {
				return nil, toolerr.Refuse("field", "items[%d] has no field %q", i, in.Field)
			}
		}
		parts[i] = render(item)
		if size += len(parts[i]) + len(sep); size > maxText {
			return nil, toolerr.Refuse("items", "the text would be longer than %d bytes", maxText)
		}
	}
	return map[string]any{"text": in.Prefix + strings.Join(parts, sep) + in.Suffix, "count": len(items)}, nil
}
