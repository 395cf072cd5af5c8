// Package chat is the bundled "chat" plugin: chat.post_message and
// chat.list_channels. Messages go to a local per-channel outbox (a JSON-lines
// file under the data directory), or, when ORDO_CHAT_WEBHOOK_URL is set, to a
// Slack-compatible incoming webhook, and are then logged in the same file.
// Each log line carries the idempotency record of the call that wrote it,
// so the log is also the idempotency journal: it is indexed on start, and a
// repeated key never posts twice.
package chat
