package contracts

import (
	"bytes"
	"cmp"
	"errors"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// compileSchema compiles one JSON Schema document offline: draft 2020-12
// unless the document says otherwise, formats asserted (they are only
// annotations by default), and no loader, so a $ref to a file or URL is a
// compile error rather than hidden I/O.
func compileSchema(url string, raw []byte) (*jsonschema.Schema, error) {
	if err := CheckJSONDepth(raw, MaxJSONDepth); err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// Violation is one failed schema keyword, in the vocabulary of the JSON
// Schema output formats, so clients can point at the offending value.
type Violation struct {
	InstanceLocation string `json:"instance_location"` // JSON pointer into the value; "" is the root
	KeywordLocation  string `json:"keyword_location"`  // JSON pointer into the schema
	Message          string `json:"message"`
}

var printer = message.NewPrinter(language.English)

// violations flattens a validation error into its leaves, sorted so that
// the same input always reports the same first violation.
// A violation inside a field of secret (top-level payload fields) says
// which keyword failed but not the message, which may quote the value
// (a pattern or format violation does): errors reach run records and logs.
func violations(ve *jsonschema.ValidationError, secret []string) []Violation {
	var out []Violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		kw := ""
		if _, frag, ok := strings.Cut(e.SchemaURL, "#"); ok {
			kw = frag
		}
		v := Violation{
			InstanceLocation: jsonPointer(e.InstanceLocation),
			KeywordLocation:  kw + jsonPointer(e.ErrorKind.KeywordPath()),
		}
		if len(e.InstanceLocation) > 0 && IsSecretField(secret, e.InstanceLocation[0]) {
			v.Message = "the value (secret, not shown) fails " + path.Base(v.KeywordLocation)
		} else {
			v.Message = e.ErrorKind.LocalizedString(printer)
		}
		out = append(out, v)
	}
	walk(ve)
	slices.SortStableFunc(out, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.InstanceLocation, b.InstanceLocation), cmp.Compare(a.KeywordLocation, b.KeywordLocation))
	})
	return slices.Compact(out)
}

func jsonPointer(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		sb.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return sb.String()
}

// validate checks v against sch and turns a failure into a coded error
// whose details carry the first violation and the full list.
func validate(sch *jsonschema.Schema, v any, code Code, what string) error {
	return schemaError(sch.Validate(v), code, what, nil)
}

// schemaError is validate's error for sch.Validate's err (nil for nil).
func schemaError(err error, code Code, what string, secret []string) error {
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return Errorf(code, "%s: %w", what, err)
	}
	vs := violations(ve, secret)
	first := vs[0]
	return Errorf(code, "%s: at %s: %s", what, displayLocation(first.InstanceLocation), first.Message).
		With("instance_location", first.InstanceLocation).
		With("keyword_location", first.KeywordLocation).
		With("violations", vs)
}

func displayLocation(ptr string) string {
	if ptr == "" {
		return "(root)"
	}
	return strconv.Quote(ptr)
}

// schemaCompileError names the contract field whose schema does not compile.
func schemaCompileError(tool, field string, err error) error {
	return Errorf(CodeInvalidContract, "tool %q: %s does not compile: %w", tool, field, err).
		With("tool", tool).With("field", field)
}
