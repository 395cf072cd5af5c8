package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
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
	"github.com/ordo-run/ordo/plugins/internal/filelock"
	"github.com/ordo-run/ordo/plugins/internal/idem"
	"github.com/ordo-run/ordo/plugins/internal/jsonl"
	"github.com/ordo-run/ordo/plugins/internal/jsonsize"
	"github.com/ordo-run/ordo/plugins/internal/killpoint"
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

// lockName is the lock every process using the data directory takes to
// read or append the channel logs. It is never held across the webhook
// call, so a hanging webhook stalls no other process.
const lockName = "chat.lock"

// keyLocks is the number of key lock files (chat-keys/NN.lock): a keyed
// post holds its key's one from lookup to logged line, so two processes
// re-issuing a key post once. A fixed set, never removed (no unlink race);
// two keys sharing a file only wait for each other.
const keyLocks = 64

// MaxChannels is how many channels the plugin opens, a log file each,
// when no allow-list (Config.Channels) names them: without a bound every
// new name a plan posts to was a new file.
const MaxChannels = 100

type plugin struct {
	maxBytes int64  // Config.MaxBytes
	dir      string // channels/
	webhook  *webhook
	allowed  []string // empty: any channel
	delivery string
	lock     *filelock.Mutex
	keysDir  string
	keysMu   sync.Mutex
	keys     map[uint32]*filelock.Mutex // opened on first use, at most keyLocks
	// The index of the logs, brought up to date under the lock with what
	// every process appended (refresh).
	logs   map[string]*jsonl.Follower // by file
	guard  *idem.Guard
	stats  map[string]channelStats
	lastTS int64 // microseconds of the newest ts handed out
}

// Tools indexes the channel logs and returns the chat tools.
func Tools(cfg Config) ([]sdk.Tool, error) {
	p := &plugin{maxBytes: cfg.MaxBytes, dir: filepath.Join(cfg.DataDir, "channels"), stats: map[string]channelStats{}, delivery: "outbox",
		logs: map[string]*jsonl.Follower{}, guard: idem.NewGuard(nil),
		keysDir: filepath.Join(cfg.DataDir, "chat-keys"), keys: map[uint32]*filelock.Mutex{}}
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
	for _, d := range []string{p.dir, p.keysDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	lock, err := filelock.Open(filepath.Join(cfg.DataDir, lockName))
	if err != nil {
		return nil, err
	}
	p.lock = lock
	if err := p.locked(func() error { return nil }); err != nil {
		return nil, err
	}
	return []sdk.Tool{
		{Contract: postContract(p.webhook != nil), Handler: p.post},
		{Contract: listChannelsContract, Handler: p.list},
	}, nil
}

// locked runs f holding the lock, the index brought up to date first.
func (p *plugin) locked(f func() error) error {
	if err := p.lock.Lock(); err != nil {
		return err
	}
	defer p.lock.Unlock()
	if err := p.refresh(); err != nil {
		return err
	}
	return f()
}

// keyLock returns the lock file serialising calls with the scoped key.
func (p *plugin) keyLock(key string) (*filelock.Mutex, error) {
	h := fnv.New32a()
	h.Write([]byte(key))
	n := h.Sum32() % keyLocks
	p.keysMu.Lock()
	defer p.keysMu.Unlock()
	if m, ok := p.keys[n]; ok {
		return m, nil
	}
	m, err := filelock.Open(filepath.Join(p.keysDir, fmt.Sprintf("%02d.lock", n)))
	if err != nil {
		return nil, err
	}
	p.keys[n] = m
	return m, nil
}

// refresh reads the lines appended to every channel log since the last
// refresh: counts, the newest ts, and the idempotency records they carry.
func (p *plugin) refresh() error {
	files, err := filepath.Glob(filepath.Join(p.dir, "*.jsonl"))
	if err != nil {
		return err
	}
	for _, f := range files {
		log, ok := p.logs[f]
		if !ok {
			log = jsonl.Follow(f)
			p.logs[f] = log
		}
		raw, err := log.Next()
		if err != nil {
			return err
		}
		for _, r := range raw {
			var l line
			if err := json.Unmarshal(r, &l); err != nil {
				return contracts.Errorf(contracts.CodeInternal, "%s: %s is not a message: %w", f, r, err).With("path", f)
			}
			p.count(l.Channel, l.TS)
			if l.Idempotency != nil {
				p.guard.Remember(*l.Idempotency)
			}
		}
	}
	return nil
}

// count records a message in the stats; callers hold the lock.
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
		return nil, toolerr.Refuse("channel", "channel %q is not one of the configured channels (bundled.chat.channels, %s)", in.Channel, ChannelsEnv).
			With("allowed", p.allowed)
	}
	s, err := idem.NewStamp(call.Tool, call.IdempotencyKey, call.Payload)
	if err != nil {
		return nil, err
	}
	if s.Keyed() {
		kl, err := p.keyLock(s.Key)
		if err != nil {
			return nil, err
		}
		if err := kl.Lock(); err != nil {
			return nil, err
		}
		defer kl.Unlock()
		var out any
		var done bool
		if err := p.locked(func() (err error) { out, done, err = p.guard.Lookup(s); return err }); done || err != nil {
			return out, err
		}
	}
	return p.send(ctx, s, channel, in.Text)
}

// send delivers one message, then logs it, with its record when keyed, in
// one appended line. The webhook call holds no lock: a keyed caller holds
// its key's lock, so no other process sends with that key meanwhile.
func (p *plugin) send(ctx context.Context, s idem.Stamp, channel, text string) (any, error) {
	if err := p.locked(func() error { return p.room(s, channel, text) }); err != nil {
		return nil, err
	}
	killpoint.Here("chat.post_message/start")
	if p.webhook != nil {
		if err := p.webhook.send(ctx, text); err != nil {
			return nil, err
		}
	}
	var out any
	err := p.locked(func() error {
		rec, err := p.log(s, channel, text)
		if err != nil {
			return err
		}
		out, err = p.guard.Done(s, rec)
		return err
	})
	return out, err
}

// lineBytes is more than a logged line takes besides its text and key:
// ts, channel (twice, with the record's result), delivery, time, hash.
const lineBytes = 512

// room refuses a post that would open a channel past MaxChannels or grow
// the logs past maxBytes, before anything is sent; callers hold the lock.
// Posts of other processes between this check and the logged line may
// pass maxBytes by their lines.
func (p *plugin) room(s idem.Stamp, channel, text string) error {
	if _, known := p.stats[channel]; !known && len(p.stats) >= MaxChannels {
		return toolerr.Refuse("channel", "channel %q would be a new channel past the %d a chat plugin without an allow-list opens (bundled.chat.channels)", channel, MaxChannels).
			With("limit", MaxChannels)
	}
	if p.maxBytes == 0 {
		return nil
	}
	var used int64
	for _, l := range p.logs {
		used += l.Size()
	}
	if grows := int64(jsonsize.Len(text)+jsonsize.Len(s.Key)) + lineBytes; used+grows > p.maxBytes {
		return toolerr.Refuse("text", "the channel logs hold %d bytes: the message would take them past the limit of %d (bundled.chat.max_bytes)", used, p.maxBytes).
			With("limit", p.maxBytes).With("used", used)
	}
	return nil
}

// log appends the message's line; callers hold the lock.
func (p *plugin) log(s idem.Stamp, channel, text string) (idem.Record, error) {
	// A Slack-style "seconds.micros" ts, strictly increasing across
	// restarts and processes: the newest logged ts is indexed.
	now := time.Now().UTC()
	p.lastTS = max(now.UnixMicro(), p.lastTS+1)
	l := line{TS: fmt.Sprintf("%d.%06d", p.lastTS/1e6, p.lastTS%1e6), Channel: channel, Text: text, Delivery: p.delivery, PostedAt: now}
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
	killpoint.Here("chat.post_message/effect")
	return rec, p.refresh() // reads the line back: counted like other processes' lines
}

func (p *plugin) list(context.Context, sdk.Call) (any, error) {
	channels := []map[string]any{}
	err := p.locked(func() error {
		for _, name := range slices.Sorted(maps.Keys(p.stats)) {
			s := p.stats[name]
			c := map[string]any{"name": name, "messages": s.messages}
			if s.lastTS != "" {
				c["last_ts"] = s.lastTS
			}
			channels = append(channels, c)
		}
		return nil
	})
	return map[string]any{"channels": channels, "delivery": p.delivery}, err
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
