// Command ordo-plugin-text is the bundled text plugin (package
// plugins/text): template, extract_json_field and join, with no state.
// The host starts it; run alone it only says that it is a plugin.
package main

import (
	"fmt"
	"os"

	"github.com/ordo-run/ordo/plugins/sdk"
	"github.com/ordo-run/ordo/plugins/text"
)

func main() {
	tools, err := text.ToolsFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ordo-plugin-text:", err)
		os.Exit(1)
	}
	sdk.Serve(tools...)
}
