package openai

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/openai/openai-go/v3/option"

	"github.com/ordo-run/ordo/contracts"
)

type refusalKey struct{}

// errTooLarge refuses an answer body over contracts.MaxMessageBytes.
var errTooLarge = contracts.Errorf(contracts.CodeInvalidInput, "answer larger than %d bytes", contracts.MaxMessageBytes).
	With("limit", contracts.MaxMessageBytes)

// boundAnswer keeps an answer larger than contracts.MaxMessageBytes, or
// nested deeper than contracts.MaxJSONDepth, from openai-go's decoder
// (which reads a whole body, however large, into memory). The refusal goes
// to Complete through the request's context, and openai-go gets only the
// answer's usage in place of the answer (a refused deep answer still
// counts its tokens; a refused large one was never read to its usage): an
// error returned here would be retried as a connection failure.
func boundAnswer(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	resp, err := next(req)
	refused, ok := req.Context().Value(refusalKey{}).(*error)
	if err != nil || !ok {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, contracts.MaxMessageBytes+1))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if len(body) > contracts.MaxMessageBytes {
		*refused, body = errTooLarge, []byte("{}")
	} else if derr := contracts.CheckJSONDepth(body, contracts.MaxJSONDepth); derr != nil {
		*refused, body = derr, usageOnly(body)
	}
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return resp, nil
}

// usageOnly is the usage of an answer as an answer of its own ({} when it
// has none, or one nested deeper than a usage object is).
func usageOnly(body []byte) []byte {
	var a struct {
		Usage json.RawMessage `json:"usage"`
	}
	if json.Unmarshal(body, &a) != nil || len(a.Usage) == 0 || contracts.CheckJSONDepth(a.Usage, 3) != nil {
		return []byte("{}")
	}
	out, _ := json.Marshal(a)
	return out
}
