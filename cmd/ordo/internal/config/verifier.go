package config

import (
	"os"
	"slices"

	"github.com/ordo-run/ordo/agent/prompts"
	"github.com/ordo-run/ordo/contracts"
)

// validateVerifier checks verifier.* and prompts_dir. The prompt files are
// read here, as the engine will read them, so `ordo config validate`
// names a file that overrides no prompt (or an empty one) instead of the
// engine falling back to its defaults at start.
func (c *Config) validateVerifier() error {
	v := c.Verifier
	if !slices.Contains([]string{"code", "llm"}, v.Mode) {
		return invalid("verifier.mode", `"code" or "llm", got %q`, v.Mode)
	}
	if v.Threshold <= 0 || v.Threshold > 1 {
		return invalid("verifier.threshold", "a score above 0 and at most 1 such as 0.7, got %g", v.Threshold)
	}
	if err := intRange("verifier.max_iterations", v.MaxIterations, 1, 10); err != nil {
		return err
	}
	for _, t := range v.Tools {
		if !toolPattern.MatchString(t) {
			return invalid("verifier.tools", "tool names such as notes.create_page, got %q", t)
		}
	}
	if c.PromptsDir == "" {
		return nil
	}
	if err := absDir("prompts_dir", c.PromptsDir); err != nil {
		return err
	}
	if st, err := os.Stat(c.PromptsDir); err != nil || !st.IsDir() {
		return invalid("prompts_dir", "a directory of NAME.md prompt files, got %q", c.PromptsDir)
	}
	if _, err := prompts.Load(os.DirFS(c.PromptsDir)); err != nil {
		ce := contracts.AsError(err)
		return invalid("prompts_dir", "NAME.md files that each replace a prompt (%s): %s", c.PromptsDir, ce.Message).With("file", ce.Details["field"])
	}
	return nil
}
