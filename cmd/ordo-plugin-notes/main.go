// Command ordo-plugin-notes is the bundled notes plugin (package
// plugins/notes): a local page store under ORDO_PLUGIN_DATA_DIR.
// The host starts it; run alone it only says that it is a plugin.
package main

import (
	"github.com/ordo-run/ordo/plugins/notes"
	"github.com/ordo-run/ordo/plugins/sdk"
)

func main() { sdk.Main("ordo-plugin-notes", notes.ToolsFromEnv) }
