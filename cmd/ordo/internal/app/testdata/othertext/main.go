// Command othertext stands for an ordo-plugin-text from another build than
// the ordo beside it: the same tools, text.template described otherwise.
package main

import (
	"github.com/ordo-run/ordo/plugins/sdk"
	"github.com/ordo-run/ordo/plugins/text"
)

// Description is text.template's description in this build.
const Description = "Fill a template (another build)."

func main() {
	sdk.Main("ordo-plugin-text", func() ([]sdk.Tool, error) {
		tools, err := text.Tools(text.Config{})
		for i := range tools {
			if tools[i].Contract.Tool == "text.template" {
				tools[i].Contract.Description = Description
			}
		}
		return tools, err
	})
}
