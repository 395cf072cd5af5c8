// Command ordo-plugin-text is the bundled text plugin (package
// plugins/text): template, extract_json_field and join, with no state.
// The host starts it; run alone it only says that it is a plugin.
package main

import (
	"github.com/ordo-run/ordo/plugins/sdk"
	"github.com/ordo-run/ordo/plugins/text"
)

func main() { sdk.Main("ordo-plugin-text", text.ToolsFromEnv) }
