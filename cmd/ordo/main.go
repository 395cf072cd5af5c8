// Command ordo is Ordo's single binary: the MCP server (ordo serve), the
// terminal runner (ordo run) and the admin commands (runs, tools, plugins,
// migrate). See docs/cli.md.
package main

import (
	"context"
	"os"

	"github.com/ordo-run/ordo/cmd/ordo/internal/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], cli.IO{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Env: os.LookupEnv,
	}))
}
