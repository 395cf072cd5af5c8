// Command ordo-plugin-files is the bundled files plugin (package
// plugins/files): read, write, list, search and delete under ORDO_FILES_ROOT.
// The host starts it; run alone it only says that it is a plugin.
package main

import (
	"fmt"
	"os"

	"github.com/ordo-run/ordo/plugins/files"
	"github.com/ordo-run/ordo/plugins/sdk"
)

func main() {
	tools, err := files.ToolsFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ordo-plugin-files:", err)
		os.Exit(1)
	}
	sdk.Serve(tools...)
}
