package mcpsource

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/jsonbound"
)

// refusedAnswer marks the error mcp-go reports for an answer refuseDeep
// replaced, so callError does not blame the upstream for it.
const refusedAnswer = "answer refused by ordo"

// refuseDeep handles an upstream message nested deeper than
// contracts.MaxJSONDepth, before mcp-go decodes it: a response becomes the
// coded refusal, so the call fails at once instead of waiting for an answer
// that never comes; a request or notification from the upstream is dropped.
func refuseDeep(log *slog.Logger, upstream string) jsonbound.Refuse {
	return func(msg []byte, err error) []byte {
		id, method := jsonbound.Head(msg)
		log.Warn("refused a message from an upstream", "upstream", upstream, "method", method, "error", err)
		if method == "" && !id.IsNil() {
			return jsonbound.Refusal(id, fmt.Errorf("%s: %w", refusedAnswer, err))
		}
		return nil
	}
}

// boundedTransport bounds the bodies an HTTP upstream answers with, in
// depth and size (jsonbound.MaxMessage): a JSON body whole, an event
// stream event by event (see jsonbound.Events).
//
// It also keeps the upstream's credentials out of what mcp-go says when a
// request fails (and so out of every log, status and record made of it):
// mcp-go is given the endpoint as shown (host.ShownURL, without its query),
// and the request to it is sent here to the real one, its query (an
// ?api_key=…), its URL secret and the keys in its path in place, so
// net/http's errors never name them; the bearer token and those values
// are hidden in an error answer's body, which mcp-go quotes — a server or
// proxy that echoes the request would put them there.
type boundedTransport struct {
	next   http.RoundTripper
	refuse jsonbound.Refuse
	shown  *url.URL            // what mcp-go posts to
	real   *url.URL            // where it goes
	hide   contracts.Concealer // spec.Secrets()
}

// newBoundedTransport is the transport for spec's endpoint.
func newBoundedTransport(spec host.UpstreamSpec, refuse jsonbound.Refuse) (boundedTransport, error) {
	base, _, _ := strings.Cut(host.ShownURL(spec.URL), "?")
	shown, err := url.Parse(base)
	if err != nil {
		return boundedTransport{}, err
	}
	real, err := url.Parse(spec.Endpoint())
	if err != nil {
		return boundedTransport{}, err
	}
	return boundedTransport{next: http.DefaultTransport, refuse: refuse, shown: shown, real: real,
		hide: contracts.Conceal(spec.Secrets()...)}, nil
}

func (t boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == t.shown.Host && req.URL.Path == t.shown.Path {
		req = req.Clone(req.Context())
		req.URL.Path, req.URL.RawPath = t.real.Path, t.real.RawPath
		req.URL.RawQuery = strings.TrimPrefix(req.URL.RawQuery+"&"+t.real.RawQuery, "&")
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= http.StatusBadRequest {
		body, err := io.ReadAll(io.LimitReader(resp.Body, jsonbound.MaxMessage))
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		body = []byte(t.hide.Text(string(body)))
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		resp.Header.Del("Content-Length")
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch media {
	case "text/event-stream":
		resp.Body = readCloser{jsonbound.Events(resp.Body, t.refuse), resp.Body}
	case "application/json":
		body, err := io.ReadAll(io.LimitReader(resp.Body, jsonbound.MaxMessage+1))
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		derr := contracts.CheckJSONDepth(body, contracts.MaxJSONDepth)
		if len(body) > jsonbound.MaxMessage {
			derr = jsonbound.ErrTooLarge
			body = body[:jsonbound.MaxMessage]
		}
		if derr != nil {
			body = t.refuse(body, derr)
			resp.ContentLength = int64(len(body))
			resp.Header.Del("Content-Length")
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	return resp, nil
}

// readCloser reads through a bound and closes the body under it.
type readCloser struct {
	io.Reader
	io.Closer
}
