package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/internal/idem"
	"github.com/ordo-run/ordo/plugins/internal/jsonl"
	"github.com/ordo-run/ordo/plugins/internal/toolerr"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// channelName is a normalised channel: lower case, no '#', safe as a file name.
var channelName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,79}$`)

// line is one message in a channel log.
type line struct {
	TS          string       `json:"ts"`
	Channel     string       `json:"channel"`
	Text        string       `json:"text"`
	Delivery    string       `json:"delivery"`
	PostedAt    time.Time    `json:"posted_at"`
	Idempotency *idem.Record `json:"idempotency,omitempty"`
}

type channelStats struct {
	messages int
	lastTS   string
}

type plugin struct {
	dir      string // channels/
	webhook  *webhook
	allowed  []string // empty: any channel
	guard    *idem.Guard
	mu       sync.Mutex // guards stats and lastTS
	stats    map[string]channelStats
	lastTS   int64 // microseconds of the newest ts handed out
	delivery string
}

// Tools indexes the channel logs and returns the chat tools.
func Tools(cfg Config) ([]sdk.Tool, error) {
	p := &plugin{dir: filepath.Join(cfg.DataDir, "channels"), stats: map[string]channelStats{}, delivery: "outbox"}
	for _, c := range cfg.Channels {
		name, ok := normalise(c)
		if !ok {
			return nil, contracts.Errorf(contracts.CodeInvalidConfig, "%s: %q is not a channel name", ChannelsEnv, c).With("setting", ChannelsEnv)
		}
		p.allowed = append(p.allowed, name)
		p.stats[name] = channelStats{}
	}
	if cfg.WebhookURL != "" {
		w, err := newWebhook(cfg.WebhookURL)
		if err != nil {
			return nil, err
		}
		p.webhook, p.delivery = w, "webhook"
	}
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return nil, err
	}
	recs, err := p.index()
	if err != nil {
		return nil, err
	}
	p.guard = idem.NewGuard(recs)
	return []sdk.Tool{
		{Contract: postMessageContract, Handler: p.post},
		{Contract: listChannelsContract, Handler: p.list},
	}, nil
}

// index reads every channel log: counts, the newest ts, and the
// idempotency records the lines carry.
func (p *plugin) index() ([]idem.Record, error) {
	files, err := filepath.Glob(filepath.Join(p.dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	var recs []idem.Record
	for _, f := range files {
		raw, err := jsonl.Load(f)
		if err != nil {
			return nil, err
		}
		for i, r := range raw {
			var l line
			if err := json.Unmarshal(r, &l); err != nil {
				return nil, contracts.Errorf(contracts.CodeInternal, "%s line %d: %w", f, i+1, err).With("path", f)
			}
			p.count(l.Channel, l.TS)
			if l.Idempotency != nil {
				recs = append(recs, *l.Idempotency)
			}
		}
	}
	return recs, nil
}

// count records a message in the stats; callers hold p.mu or run alone.
func (p *plugin) count(channel, ts string) {
	s := p.stats[channel]
	s.messages++
	s.lastTS = ts
	p.stats[channel] = s
	if micros, ok := parseTS(ts); ok && micros > p.lastTS {
		p.lastTS = micros
	}
}

type postIn struct {
	Channel string `json:"channel"`
	Text    string `json:"text"`
}

func (p *plugin) post(ctx context.Context, call sdk.Call) (any, error) {
	var in postIn
	if err := call.Decode(&in); err != nil {
		return nil, err
	}
	channel, ok := normalise(in.Channel)
	if !ok {
		return nil, toolerr.Refuse("channel", "channel %q is not a channel name", in.Channel)
	}
	if len(p.allowed) > 0 && !slices.Contains(p.allowed, channel) {
		return nil, toolerr.Refuse("channel", "channel %q is not one of the configured channels (%s)", in.Channel, ChannelsEnv).
			With("allowed", p.allowed)
	}
	return p.guard.Do(call.Tool, call.IdempotencyKey, call.Payload, func(s idem.Stamp) (idem.Record, error) {
		if p.webhook != nil {
			if err := p.webhook.send(ctx, in.Text); err != nil {
				return idem.Record{}, err
			}
		}
		now := time.Now().UTC()
		l := line{TS: p.nextTS(now), Channel: channel, Text: in.Text, Delivery: p.delivery, PostedAt: now}
		rec, err := s.Record(map[string]any{"ts": l.TS, "channel": channel, "delivery": p.delivery})
		if err != nil {
			return rec, err
		}
		if s.Keyed() {
			l.Idempotency = &rec
		}
		if err := jsonl.Append(filepath.Join(p.dir, channel+".jsonl"), l); err != nil {
			if p.webhook != nil { // sent but not logged: say so, a retry would post again
				return rec, toolerr.Failed("message sent to the webhook but not logged: %w", err)
			}
			return rec, err
		}
		p.mu.Lock()
		p.count(channel, l.TS)
		p.mu.Unlock()
		return rec, nil
	})
}

// nextTS hands out a Slack-style "seconds.micros" timestamp, strictly
// increasing even across restarts (the newest logged ts is indexed).
func (p *plugin) nextTS(now time.Time) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lastTS = max(now.UnixMicro(), p.lastTS+1)
	return fmt.Sprintf("%d.%06d", p.lastTS/1e6, p.lastTS%1e6)
}

func (p *plugin) list(context.Context, sdk.Call) (any, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	channels := []map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(p.stats)) {
		s := p.stats[name]
		c := map[string]any{"name": name, "messages": s.messages}
		if s.lastTS != "" {
			c["last_ts"] = s.lastTS
		}
		channels = append(channels, c)
	}
	return map[string]any{"channels": channels, "delivery": p.delivery}, nil
}

// normalise lower-cases a channel name and drops a leading '#'.
func normalise(name string) (string, bool) {
	n := strings.ToLower(strings.TrimPrefix(name, "#"))
	return n, channelName.MatchString(n)
}

func parseTS(ts string) (int64, bool) {
	sec, micro, ok := strings.Cut(ts, ".")
	s, err1 := strconv.ParseInt(sec, 10, 64)
	m, err2 := strconv.ParseInt(micro, 10, 64)
	return s*1e6 + m, ok && err1 == nil && err2 == nil
}
