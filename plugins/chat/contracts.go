package chat

import (
	"encoding/json"

	"github.com/ordo-run/ordo/contracts"
)

var (
	postMessageContract = contracts.Contract{
		Tool: "chat.post_message", Service: "chat", RiskLevel: contracts.RiskWrite,
		Tags:        []string{contracts.TagExternalSend},
		Description: "Post a text message to a chat channel (Slack-style): to the local outbox, or to the configured incoming webhook. Returns the message timestamp.",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["channel","text"],"properties":{
			"channel":{"type":"string","pattern":"^#?[A-Za-z0-9][A-Za-z0-9._-]{0,79}$","description":"channel name, e.g. general or #general"},
			"text":{"type":"string","minLength":1,"maxLength":40000}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["ts","channel","delivery"],"properties":{
			"ts":{"type":"string","pattern":"^[0-9]+\\.[0-9]{6}$"},"channel":{"type":"string"},"delivery":{"enum":["outbox","webhook"]}}}`),
		ProducesMap: map[string]string{"message_ts": "$.ts"},
		TimeoutMS:   15000,
		// IdempotentWithKey is set by postContract.
	}
	listChannelsContract = contracts.Contract{
		Tool: "chat.list_channels", Service: "chat", RiskLevel: contracts.RiskRead, Idempotent: true,
		Description: "List chat channels known to this plugin (configured or posted to) with their message counts.",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{}}`),
		OutputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["channels","delivery"],"properties":{
			"channels":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["name","messages"],"properties":{
				"name":{"type":"string"},"messages":{"type":"integer","minimum":0},"last_ts":{"type":"string"}}}},
			"delivery":{"enum":["outbox","webhook"]}}}`),
		ProducesMap: map[string]string{"channels": "$.channels"},
		TimeoutMS:   5000,
	}
)

// Contracts are the contracts Tools serves with cfg, known without
// opening anything: what a host lists while the plugin's process starts.
func Contracts(cfg Config) []contracts.Contract {
	return []contracts.Contract{postContract(cfg.WebhookURL != ""), listChannelsContract}
}

// postContract is chat.post_message's contract: idempotent with a key for
// the outbox only, since a webhook post cut off by a crash may have left,
// and cannot be asked.
func postContract(webhook bool) contracts.Contract {
	post := postMessageContract
	post.IdempotentWithKey = !webhook
	return post
}
