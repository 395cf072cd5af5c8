package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersionCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print Ordo's version, the commit it was built from, Go version and platform",
		Example: "  ordo version\n  ordo --version\n  ordo version --json",
		Args:    args(0, 0),
		RunE: func(*cobra.Command, []string) error {
			b := readBuild()
			if asJSON {
				return writeJSON(g.io.Out, b)
			}
			_, err := fmt.Fprintln(g.io.Out, b.line())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"version", "commit", "modified", "go", "platform"}`)
	return cmd
}

// build names the exact build a bug report is about: the version, the
// commit Go recorded (and whether the tree had uncommitted changes), the
// Go version and the platform.
type build struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

func readBuild() build {
	b := build{Version: version(), Commit: "unknown", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision":
				b.Commit = s.Value
			case s.Key == "vcs.modified" && s.Value == "true":
				b.Modified = true
			}
		}
	}
	return b
}

// line is what `ordo version` and `ordo --version` print.
func (b build) line() string {
	modified := ""
	if b.Modified {
		modified = " modified"
	}
	return fmt.Sprintf("ordo %s (commit %s%s, %s, %s)", b.Version, b.Commit, modified, b.Go, b.Platform)
}
