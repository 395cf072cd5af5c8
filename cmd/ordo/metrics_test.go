package main_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/internal/testmcp"
	"github.com/ordo-run/ordo/internal/testwait"
)

// scrape GETs url and returns the status and body.
func scrape(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// sample is the value of one series in a Prometheus text exposition
// (labels in name order, as the client writes them); -1 when absent.
func sample(body, series string) float64 {
	for line := range strings.Lines(body) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}

// TestMetricsMoveWithRuns: a real `ordo serve --http` with a scripted
// model serves /metrics on its MCP listener and on metrics.listen. After a
// planned run that completes, a run whose tool fails and a run waiting for
// plan approval, the series have moved: runs by outcome, steps and their
// duration by tool, tool errors by code, checkpoint writes, model calls and
// tokens by role and model, MCP requests by method, plugins up, the
// interrupt waiting. No label carries a run id. /readyz says ready.
// serveGreeter starts `ordo serve --http` for the admin ada (token), with
// config appended to the file and env added, and a scripted model that
// plans greetPlan and composes its answer, reporting usage.
func serveGreeter(t *testing.T, ctx context.Context, token, config string, env ...string) (mcpURL, logs string) {
	t.Helper()
	llm := llmtest.New(t,
		llmtest.Reply{Role: "planner", Content: greetPlan, Usage: &llmtest.Usage{Prompt: 120, Completion: 40}},
		llmtest.Reply{Role: "composer", Content: "Said hello.", Usage: &llmtest.Usage{Prompt: 30, Completion: 7}})
	e := newEnv(t)
	cfg := filepath.Join(e.home, "ordo.yaml")
	os.WriteFile(cfg, []byte("http:\n  tokens:\n    - {name: ada, token_env: ADA_TOKEN, role: admin}\n"+config), 0o600)
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "ordo"), "--config", cfg, "serve", "--http", "127.0.0.1:0")
	cmd.Dir, cmd.Env = repoRoot, append(append(e.vars, "ADA_TOKEN="+token,
		"ORDO_LLM_BASE_URL="+llm.URL, "ORDO_LLM_MODEL=test-model", "OPENAI_API_KEY=sk-test"), env...)
	return listening(t, cmd)
}

func TestMetricsMoveWithRuns(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const token = "metrics-test-token-0123456789"
	mcpURL, logs := serveGreeter(t, ctx, token, "metrics:\n  listen: 127.0.0.1:0\n")
	base := strings.TrimSuffix(mcpURL, "/mcp")

	code, before := scrape(t, base+"/metrics")
	if code != http.StatusOK || sample(before, "ordo_runs_started_total") != 0 {
		t.Fatalf("first scrape: %d, runs started %v\n%s", code, sample(before, "ordo_runs_started_total"), before)
	}

	res := mcpCall(t, ctx, mcpURL, token, "execute", map[string]any{"goal": "greet the world", "options": map[string]any{"auto_approve": true}})
	if res.IsError || !strings.Contains(testmcp.Text(res), `"completed"`) {
		t.Fatalf("planned run: %s", testmcp.Text(res))
	}
	var failing map[string]any
	_ = json.Unmarshal([]byte(`{"version":"1.0","goal":"read nothing","timezone":"UTC","actions":[
		{"id":"read","tool":"sheets.query","intent":"read","requires":[],"produces":["records"],"inputs":{"file":"no-such-file.csv"}}]}`), &failing)
	if res := mcpCall(t, ctx, mcpURL, token, "execute", map[string]any{"plan": failing, "options": map[string]any{"auto_approve": true}}); !res.IsError {
		t.Fatalf("a run reading a missing file: %s", testmcp.Text(res))
	}
	var waiting map[string]any
	_ = json.Unmarshal([]byte(greetPlan), &waiting)
	if res := mcpCall(t, ctx, mcpURL, token, "plan", map[string]any{"plan": waiting}); !strings.Contains(testmcp.Text(res), "plan_approval") {
		t.Fatalf("a run waiting for plan approval: %s", testmcp.Text(res))
	}

	_, after := scrape(t, base+"/metrics")
	for series, min := range map[string]float64{
		`ordo_runs_started_total`:                                                 3,
		`ordo_runs_finished_total{outcome="completed"}`:                           1,
		`ordo_runs_finished_total{outcome="failed"}`:                              1,
		`ordo_runs{status="interrupted"}`:                                         1,
		`ordo_interrupts_waiting`:                                                 1,
		`ordo_interrupt_oldest_age_seconds`:                                       0,
		`ordo_steps_total{status="succeeded",tool="text.template"}`:               1,
		`ordo_steps_total{status="failed",tool="sheets.query"}`:                   1,
		`ordo_step_duration_seconds_count{tool="text.template"}`:                  1,
		`ordo_checkpoint_write_duration_seconds_count{store="embedded"}`:          5,
		`ordo_llm_calls_total{model="test-model",outcome="ok",role="planner"}`:    1,
		`ordo_llm_calls_total{model="test-model",outcome="ok",role="composer"}`:   1,
		`ordo_llm_tokens_total{model="test-model",role="planner",type="input"}`:   120,
		`ordo_llm_tokens_total{model="test-model",role="planner",type="output"}`:  40,
		`ordo_llm_call_duration_seconds_count{model="test-model",role="planner"}`: 1,
		`ordo_mcp_requests_total{method="tools/call",outcome="ok"}`:               2,
		`ordo_mcp_requests_total{method="tools/call",outcome="error"}`:            1,
		`ordo_mcp_requests_total{method="initialize",outcome="ok"}`:               3,
		`ordo_plugin_up{plugin="text"}`:                                           1,
		`ordo_plugin_restarts_total{plugin="text"}`:                               0,
		`ordo_store_up`:              1,
		`ordo_lease_takeovers_total`: 0,
	} {
		if got := sample(after, series); got < min {
			t.Errorf("%s = %v, want >= %v", series, got, min)
		}
	}
	// Each request counted once: two tool calls answered, one isError.
	if ok, failed := sample(after, `ordo_mcp_requests_total{method="tools/call",outcome="ok"}`),
		sample(after, `ordo_mcp_requests_total{method="tools/call",outcome="error"}`); ok != 2 || failed != 1 {
		t.Errorf("tools/call counted %v ok, %v error; want 2 and 1", ok, failed)
	}
	if !regexp.MustCompile(`ordo_tool_errors_total\{code="\d+",tool="sheets.query"\} [1-9]`).MatchString(after) {
		t.Errorf("no tool error counted for sheets.query by code:\n%s", grepLines(after, "ordo_tool_errors_total"))
	}
	if strings.Contains(after, "run_") {
		t.Errorf("a run id reached the metrics:\n%s", grepLines(after, "run_"))
	}

	// The same registry on metrics.listen, whose address the server logged.
	metricsURL := ""
	for line := range strings.Lines(logs) {
		var l struct{ Msg, Addr string }
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "serving metrics" {
			metricsURL = l.Addr
		}
	}
	if metricsURL == "" {
		t.Fatalf("no metrics address logged:\n%s", logs)
	}
	ops := strings.TrimSuffix(metricsURL, "/metrics")
	if code, body := scrape(t, metricsURL); code != http.StatusOK || sample(body, "ordo_runs_started_total") < 3 {
		t.Errorf("metrics.listen: %d, runs started %v", code, sample(body, "ordo_runs_started_total"))
	}
	// On a new data directory the bundled plugins are listed before their
	// processes start (in the background): ready once they have.
	var body string
	var err error
	var ready struct {
		Ready  bool
		Checks []struct {
			Name string
			OK   bool
		}
	}
	testwait.Until(t, time.Minute, "/readyz ready", func() bool {
		code, body = scrape(t, ops+"/readyz")
		err = json.Unmarshal([]byte(body), &ready)
		return err == nil && code == http.StatusOK
	})
	if !ready.Ready || len(ready.Checks) < 6 {
		t.Errorf("readyz: %d %v %s", code, err, body)
	}
}

// TestReadyzWaitsForUpstreams: an upstream MCP server in the
// configuration that has never listed its tools (nothing listens at its
// URL) keeps /readyz at 503, naming the failed check; /healthz stays up.
func TestReadyzWaitsForUpstreams(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const token = "readyz-test-token-0123456789"
	srv := serve(t, ctx, serverSpec{store: "embedded", token: token,
		config: "upstreams:\n  - {name: gone, url: \"http://127.0.0.1:9/mcp\"}\n"})
	base := strings.TrimSuffix(srv.url, "/mcp")
	code, body := scrape(t, base+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `{"name":"upstream gone","ok":false`) ||
		!strings.Contains(body, `{"name":"store","ok":true}`) {
		t.Errorf("readyz: %d %s", code, body)
	}
	if code, _ := scrape(t, base+"/healthz"); code != http.StatusOK {
		t.Errorf("healthz: %d", code)
	}
	if _, body := scrape(t, base+"/metrics"); sample(body, `ordo_upstream_up{upstream="gone"}`) != 0 {
		t.Errorf("ordo_upstream_up: %v", sample(body, `ordo_upstream_up{upstream="gone"}`))
	}
}

// grepLines keeps body's lines containing s.
func grepLines(body, s string) string {
	var b strings.Builder
	for line := range strings.Lines(body) {
		if strings.Contains(line, s) {
			b.WriteString(line)
		}
	}
	return b.String()
}
