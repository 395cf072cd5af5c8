package interop_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ordo-run/ordo/internal/syncbuf"
	"github.com/ordo-run/ordo/internal/testbuild"
)

// The tests build ordo with the bundled plugins beside it (where ordo looks
// for them) once, and run it as an MCP client would.
var (
	binDir   string
	repoRoot string
)

func TestMain(m *testing.M) {
	os.Exit(testbuild.Main(m, "ordo-interop-", func(root, _, bin string) error {
		repoRoot, binDir = root, bin
		return nil
	}))
}

// needNode skips the test when node or npm is missing; CI has both.
func needNode(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipped: %s is not installed (this test runs the official MCP TypeScript SDK; CI has node and npm)", tool)
		}
	}
}

// server is one `ordo serve --http` process.
type server struct {
	url  string // http://127.0.0.1:PORT/mcp
	cmd  *exec.Cmd
	logs *syncbuf.Buffer
}

// ordoEnv is a fresh home and data directory for one ordo, with the
// bundled sheets plugin reading the repository's example data.
func ordoEnv(t *testing.T) []string {
	home := t.TempDir()
	return []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "ORDO_DATA_DIR=" + filepath.Join(home, "data"),
		"ORDO_SHEETS_ROOT=" + repoRoot}
}

// serveHTTP starts `ordo serve --http 127.0.0.1:0` with one bearer token
// (configured the documented way: http.tokens with token_env) and returns
// once it logs its address. The server stops with the test.
func serveHTTP(t *testing.T, user, role, token string) *server {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "ordo.yaml")
	conf := fmt.Sprintf("http:\n  tokens:\n    - {name: %s, token_env: ORDO_TEST_TOKEN, role: %s}\n", user, role)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "ordo"), "--config", cfg, "serve", "--http", "127.0.0.1:0")
	cmd.Dir, cmd.Env = repoRoot, append(ordoEnv(t), "ORDO_TEST_TOKEN="+token)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, logs: &syncbuf.Buffer{}}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("ordo serve log:\n%s", s.logs.String())
		}
	})
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		s.logs.Write(append(sc.Bytes(), '\n'))
		var line struct{ Msg, Addr string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "serving MCP over HTTP" {
			s.url = line.Addr
			break
		}
	}
	if s.url == "" {
		t.Fatalf("ordo serve logged no address:\n%s", s.logs.String())
	}
	go func() { // keep draining, or ordo blocks on a full pipe
		for sc.Scan() {
			s.logs.Write(append(sc.Bytes(), '\n'))
		}
		_, _ = io.Copy(s.logs, stderr)
	}()
	return s
}
