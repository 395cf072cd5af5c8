// Command ordo-plugin-chat is the bundled chat plugin (package plugins/chat):
// a local per-channel outbox, or a Slack-compatible incoming webhook when
// ORDO_CHAT_WEBHOOK_URL is set. The host starts it; run alone it only says
// that it is a plugin.
package main

import (
	"github.com/ordo-run/ordo/plugins/chat"
	"github.com/ordo-run/ordo/plugins/sdk"
)

func main() { sdk.Main("ordo-plugin-chat", chat.ToolsFromEnv) }
