package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/cmd/ordo/internal/console"
	"github.com/ordo-run/ordo/memory"
)

func newSessionsCmd(g *globals) *cobra.Command {
	return group(&cobra.Command{
		Use:   "sessions",
		Short: "List your conversations and show one's turns",
		Long: `A run started with 'ordo run --session NAME' (or MCP plan/execute with session_id) is a turn
of the conversation NAME: the planner, re-planner and composer see its last 10 turns. These
are the conversations of the local user ('ordo run' runs as "local"); an MCP user's sessions
are theirs alone (MCP list_sessions, get_session).`,
		Example: `  ordo sessions list
  ordo sessions show trip --json`,
	}, newSessionsListCmd(g), newSessionsShowCmd(g))
}

func newSessionsListCmd(g *globals) *cobra.Command {
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List your conversations, most recently active first",
		Example: `  ordo sessions list --limit 5`,
		Args:    args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withStore(cmd.Context(), func(_ *config.Config, st memory.Checkpointer) error {
				list, err := agent.ListSessions(cmd.Context(), st, LocalUser, limit)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(g.io.Out, list)
				}
				tw := tabwriter.NewWriter(g.io.Out, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "SESSION\tTURNS\tUPDATED\tLAST GOAL")
				for _, s := range list {
					fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", s.ID, s.Turns, s.UpdatedAt.Local().Format(time.DateTime), console.Clip(s.LastGoal, 60))
				}
				if len(list) == 0 {
					fmt.Fprintln(tw, "(no sessions: start one with ordo run --session NAME \"GOAL\")")
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 20, "at most this many sessions")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newSessionsShowCmd(g *globals) *cobra.Command {
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "show NAME",
		Short:   "Show a conversation's turns, oldest first: goal, answer, status and run",
		Example: `  ordo sessions show trip --limit 10`,
		Args:    args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			return g.withStore(cmd.Context(), func(_ *config.Config, st memory.Checkpointer) error {
				s, err := agent.GetSession(cmd.Context(), st, LocalUser, a[0], limit)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(g.io.Out, s)
				}
				return showSession(g.io.Out, s)
			})
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "only the last N turns (0: all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// showSession prints a session's turns as a transcript.
func showSession(w io.Writer, s *agent.Session) error {
	fmt.Fprintf(w, "session %s: %d turns\n", s.ID, len(s.Turns))
	for _, t := range s.Turns {
		fmt.Fprintf(w, "\n%s  %s  %s\n", t.At.Local().Format(time.DateTime), t.Status, t.RunID)
		fmt.Fprintf(w, "> %s\n", t.Goal)
		if t.Answer != "" {
			fmt.Fprintln(w, strings.TrimRight(t.Answer, "\n"))
		}
	}
	return nil
}
