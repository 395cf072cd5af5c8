package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ordo-run/ordo/cmd/ordo/internal/app"
)

func newMigrateCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade the run store's schema",
		Long: `Apply the store's schema migrations: for Postgres the versioned SQL migrations (safe to
run from several hosts at once; they take an advisory lock), for the embedded store the
schema of <data_dir>/ordo.db. 'ordo serve' and 'ordo run' do this on start too.`,
		Example: "  ordo migrate\n  ordo migrate --store postgres://ordo@db/ordo\n  ORDO_STORE=postgres://ordo@db/ordo ordo migrate",
		Args:    args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, _, err := g.load()
			if err != nil {
				return err
			}
			applied, err := app.Migrate(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(g.io.Out, map[string]any{"applied": append([]string{}, applied...)})
			}
			for _, m := range applied {
				fmt.Fprintf(g.io.Out, "applied %s\n", m)
			}
			_, err = fmt.Fprintf(g.io.Out, "store is up to date (%d migration(s) applied now)\n", len(applied))
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"applied": [MIGRATION...]}`)
	return cmd
}
