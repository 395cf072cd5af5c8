package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print Ordo's version",
		Example: "  ordo version",
		Args:    args(0, 0),
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(g.io.Out, "ordo %s (%s, %s/%s)\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
