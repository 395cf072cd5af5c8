// Command ordo-plugin-sheets is the bundled sheets plugin (package
// plugins/sheets): ranges and queries over CSV/TSV files under
// ORDO_SHEETS_ROOT. The host starts it; run alone it only says that it is
// a plugin.
package main

import (
	"github.com/ordo-run/ordo/plugins/sdk"
	"github.com/ordo-run/ordo/plugins/sheets"
)

func main() { sdk.Main("ordo-plugin-sheets", sheets.ToolsFromEnv) }
