package chat

import (
	"os"
	"strings"

	"github.com/ordo-run/ordo/plugins/internal/plugenv"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// Environment variables the plugin reads.
const (
	WebhookEnv  = "ORDO_CHAT_WEBHOOK_URL"
	ChannelsEnv = "ORDO_CHAT_CHANNELS"
	MaxBytesEnv = "ORDO_CHAT_MAX_BYTES"
)

// DefaultMaxBytes is Config.MaxBytes when ORDO_CHAT_MAX_BYTES is unset.
const DefaultMaxBytes = 64 << 20

// Config is where messages go.
type Config struct {
	// DataDir holds channels/<name>.jsonl, one log per channel.
	DataDir string
	// WebhookURL, when set, receives every message as {"text": ...}. It is
	// a secret: it is never logged or put in an error.
	WebhookURL string
	// Channels, when not empty, is the only channels posting is allowed to.
	// When it is empty, at most MaxChannels channels are opened.
	Channels []string
	// MaxBytes bounds the channel logs together: a post that would grow
	// them past it is refused. 0 is no limit.
	MaxBytes int64
}

// ConfigFromEnv reads ORDO_PLUGIN_DATA_DIR, ORDO_CHAT_WEBHOOK_URL,
// ORDO_CHAT_CHANNELS (comma-separated) and ORDO_CHAT_MAX_BYTES.
func ConfigFromEnv() (Config, error) {
	dir, err := plugenv.DataDir("chat")
	if err != nil {
		return Config{}, err
	}
	max, err := plugenv.Bytes(MaxBytesEnv, DefaultMaxBytes)
	if err != nil {
		return Config{}, err
	}
	cfg := Config{DataDir: dir, WebhookURL: os.Getenv(WebhookEnv), MaxBytes: max}
	for _, c := range strings.Split(os.Getenv(ChannelsEnv), ",") {
		if c = strings.TrimSpace(c); c != "" {
			cfg.Channels = append(cfg.Channels, c)
		}
	}
	return cfg, nil
}

// ToolsFromEnv is ConfigFromEnv then Tools: what the plugin binary serves.
func ToolsFromEnv() ([]sdk.Tool, error) {
	cfg, err := ConfigFromEnv()
	if err != nil {
		return nil, err
	}
	return Tools(cfg)
}
