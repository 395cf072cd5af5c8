package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/ordo-run/ordo/internal/testmcp"
)

// bareMCPEnv makes this test binary the anchor of
// BenchmarkServeFirstToolsList: a bare mcp-go stdio server with one tool.
// It is checked in init, before TestMain builds anything.
const bareMCPEnv = "ORDO_BENCH_BARE_MCP"

func init() {
	if os.Getenv(bareMCPEnv) == "" {
		return
	}
	s := mcpgo.NewMCPServer("bare", "1.0.0", mcpgo.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echoes text."), mcp.WithString("text", mcp.Required()),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false)),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(req.GetString("text", "")), nil
		})
	_ = mcpgo.ServeStdio(s)
	os.Exit(0)
}

// BenchmarkServeFirstToolsList is how long a client waits from starting
// the server process to the answer of its first tools/list (initialize,
// then tools/list, over stdio): the real `ordo serve` with the five bundled
// plugins and expose_tools on (so the list holds the plugins' tools), and,
// in the same run, a bare mcp-go server as the anchor. "cold" starts with
// an empty data directory every time; "warm" reuses one, as a user's
// second and later starts do. Each sub-benchmark reports first-list-ms, the
// median (issue 14: ordo within 100 ms), and cpu-ms, the median CPU time
// of the server process (and the children it reaped) from its start to
// its exit when the client closes right after the list: less noisy than
// the wall time on a loaded machine.
//
//	go test -run '^$' -bench ServeFirstToolsList -benchtime 20x ./cmd/ordo/
func BenchmarkServeFirstToolsList(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("bare-mcp-go", func(b *testing.B) {
		firstList(b, self, []string{bareMCPEnv + "=1"}, nil, "", "echo")
	})
	home := b.TempDir()
	vars := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "ORDO_EXPOSE_TOOLS=true", "ORDO_SHEETS_ROOT=" + repoRoot}
	b.Run("ordo-serve-cold", func(b *testing.B) {
		firstList(b, filepath.Join(binDir, "ordo"), vars, []string{"serve"}, "fresh", "sheets__query")
	})
	b.Run("ordo-serve-warm", func(b *testing.B) {
		data := filepath.Join(home, "warm")
		firstList(b, filepath.Join(binDir, "ordo"), append(vars, "ORDO_DATA_DIR="+data), []string{"serve"}, "", "sheets__query")
	})
}

// firstList starts cmd b.N times (plus once to warm the page cache and,
// for a reused data directory, the server's own state) and reports the
// median time to the first tools/list answer, which must list want. With
// dataDir "fresh", each start gets an empty ORDO_DATA_DIR.
func firstList(b *testing.B, cmd string, vars, args []string, dataDir, want string) {
	var lat, cpu []time.Duration
	once := func() (time.Duration, time.Duration) {
		env := vars
		if dataDir == "fresh" {
			env = append(env, "ORDO_DATA_DIR="+b.TempDir())
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var proc *exec.Cmd
		t0 := time.Now()
		c, err := client.NewStdioMCPClientWithOptions(cmd, env, args,
			transport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
				proc = exec.CommandContext(ctx, command, args...)
				proc.Env, proc.Dir = env, repoRoot
				return proc, nil
			}))
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close() // on failure; Close is called below, once
		if _, err := c.Initialize(ctx, initRequest()); err != nil {
			b.Fatal(err)
		}
		names := testmcp.ToolNames(b, c)
		d := time.Since(t0)
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			b.Fatalf("first tools/list %v lacks %s", names, want)
		}
		c.Close() // waits for the process to exit
		if proc.ProcessState == nil {
			b.Fatal("the server had not exited after Close")
		}
		return d, proc.ProcessState.UserTime() + proc.ProcessState.SystemTime()
	}
	once()
	for b.Loop() {
		d, c := once()
		lat, cpu = append(lat, d), append(cpu, c)
	}
	b.ReportMetric(float64(median(lat))/float64(time.Millisecond), "first-list-ms")
	b.ReportMetric(float64(median(cpu))/float64(time.Millisecond), "cpu-ms")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
