// Command ordo-plugin-notes is the bundled notes plugin (package
// plugins/notes): a local page store under ORDO_PLUGIN_DATA_DIR.
// The host starts it; run alone it only says that it is a plugin.
package main

import (
	"fmt"
	"os"

	"github.com/ordo-run/ordo/plugins/notes"
	"github.com/ordo-run/ordo/plugins/sdk"
)

func main() {
	tools, err := notes.ToolsFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ordo-plugin-notes:", err)
		os.Exit(1)
	}
	sdk.Serve(tools...)
}
