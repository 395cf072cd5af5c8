package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// verifier.* and prompts_dir: good values load (a relative prompts_dir
// against the file's directory); bad ones are refused naming the key, and
// a prompt file that overrides no prompt names the file.
func TestVerifierAndPromptsDir(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "prompts")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "verifier.md"), []byte("role: verifier\nBe strict."), 0o600)
	env := envOf("HOME", "/h")
	cfg, err := Parse([]byte("verifier:\n  mode: llm\n  threshold: 0.9\n  max_iterations: 2\n  tools: [notes.create_page]\nprompts_dir: prompts\n"), base, env)
	if err != nil || cfg.Verifier.Mode != "llm" || cfg.Verifier.Threshold != 0.9 || cfg.PromptsDir != dir {
		t.Fatalf("%v %+v %s", err, cfg.Verifier, cfg.PromptsDir)
	}
	if cfg, err := Parse([]byte("parallelism: 2\n"), base, env); err != nil || cfg.Verifier.Mode != "code" || cfg.Verifier.Threshold != 0.7 {
		t.Fatalf("defaults: %v %+v", err, cfg.Verifier)
	}
	for _, c := range []struct{ yaml, key string }{
		{"verifier:\n  mode: critic\n", "verifier.mode"},
		{"verifier:\n  threshold: 1.5\n", "verifier.threshold"},
		{"verifier:\n  max_iterations: 0\n", "verifier.max_iterations"},
		{"verifier:\n  tools: ['no spaces']\n", "verifier.tools"},
		{"prompts_dir: missing\n", "prompts_dir"},
	} {
		if _, err := Parse([]byte(c.yaml), base, env); keyOf(t, err) != c.key {
			t.Errorf("%q: %v", c.yaml, err)
		}
	}
	os.WriteFile(filepath.Join(dir, "planer.md"), []byte("role: planner\n"), 0o600)
	_, err = Parse([]byte("prompts_dir: prompts\n"), base, env)
	if keyOf(t, err) != "prompts_dir" || contracts.AsError(err).Details["file"] != "planer.md" {
		t.Fatalf("unknown prompt file: %v", err)
	}
}
