package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/internal/toolerr"
)

// webhook posts Slack incoming-webhook bodies. Its URL is a credential
// (the path is the secret), so no error or log ever contains it.
type webhook struct {
	url    string
	path   string // the secret part, hidden where the webhook's answer repeats it
	client *http.Client
}

func newWebhook(raw string) (*webhook, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "%s is not an http(s) URL", WebhookEnv).With("setting", WebhookEnv)
	}
	// A redirect is not followed: the message goes to the configured
	// webhook or nowhere (a 307 re-posts it to wherever it points).
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &webhook{url: raw, path: strings.TrimSuffix(u.Path, "/"), client: &http.Client{Timeout: 10 * time.Second, CheckRedirect: noRedirect}}, nil
}

// send posts {"text": text}. Network failures, 429 and 5xx are retryable;
// other non-2xx answers are not (the webhook is misconfigured or revoked).
func (w *webhook) send(ctx context.Context, text string) error {
	body, err := json.Marshal(map[string]string{"text": text})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return toolerr.Failed("cannot build the webhook request")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error's message repeats the URL
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return toolerr.Transient("webhook unreachable: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		return nil
	}
	msg := w.redact(resp.Body)
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		return toolerr.Transient("webhook answered %d: %s", resp.StatusCode, msg).With("status", resp.StatusCode)
	}
	return toolerr.Failed("webhook refused the message with %d: %s", resp.StatusCode, msg).With("status", resp.StatusCode)
}

// answerBytes is how much of a refusing webhook's answer an error quotes.
const answerBytes = 200

// redact reads the start of a webhook's answer for an error message, with
// the secret path hidden where it repeats it (a proxy's "no route for …"):
// a path that starts in the quoted part is read whole and hidden, and the
// start of one cut by the end of what was read is dropped. Cutting at 200
// bytes before hiding put the first half of a path there in the error.
func (w *webhook) redact(body io.Reader) string {
	limit := int64(answerBytes + len(w.path))
	answer, _ := io.ReadAll(io.LimitReader(body, limit))
	msg := string(answer)
	if w.path != "" {
		msg = strings.ReplaceAll(msg, w.path, contracts.Redacted)
		if int64(len(answer)) == limit { // the answer goes on: its end may start the path
			for i := len(w.path) - 1; i > 0; i-- {
				if strings.HasSuffix(msg, w.path[:i]) {
					msg = msg[:len(msg)-i]
					break
				}
			}
		}
	}
	if len(msg) > answerBytes {
		msg = strings.ToValidUTF8(msg[:answerBytes], "")
	}
	return strings.TrimSpace(msg)
}
