// Command ordo-plugin-files is the bundled files plugin (package
// plugins/files): read, write, list, search and delete under ORDO_FILES_ROOT.
// The host starts it; run alone it only says that it is a plugin.
package main

import (
	"github.com/ordo-run/ordo/plugins/files"
	"github.com/ordo-run/ordo/plugins/sdk"
)

func main() { sdk.Main("ordo-plugin-files", files.ToolsFromEnv) }
