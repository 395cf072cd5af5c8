package prompts

import (
	"embed"
	"errors"
	"io/fs"
	"slices"
	"strings"

	"github.com/ordo-run/ordo/contracts"
)

// Prompt names.
const (
	Planner   = "planner"
	Replanner = "replanner"
	Filler    = "filler"
	Verifier  = "verifier"
	Composer  = "composer"
	Generate  = "generate"
	Summarize = "summarize"
)

var names = []string{Planner, Replanner, Filler, Verifier, Composer, Generate, Summarize}

//go:embed defaults/*.md
var defaults embed.FS

// planRules are the planning rules that bind anyone who writes an Action
// Plan: Ordo's planner, whose prompt takes them where it says
// {{plan_rules}}, and an assistant writing a plan itself (MCP write_plan).
//
//go:embed plan_rules.md
var planRules string

// PlanRules returns the planning rules (see planRules).
func PlanRules() string { return planRules }

// Set is a loaded set of prompts.
type Set map[string]string

// Load returns the defaults with any NAME.md found at the root of override
// replacing its default. A nil override gives the defaults. An empty
// override file is refused, naming the file, and so is a file at the root
// that overrides no prompt (a typo would otherwise be ignored silently);
// dot files are left alone.
func Load(override fs.FS) (Set, error) {
	if err := checkNames(override); err != nil {
		return nil, err
	}
	s := Set{}
	for _, n := range names {
		b, err := fs.ReadFile(defaults, "defaults/"+n+".md")
		if err != nil {
			return nil, contracts.Errorf(contracts.CodeInternal, "prompts: default %s: %w", n, err)
		}
		s[n] = string(b)
		if override == nil {
			continue
		}
		b, err = fs.ReadFile(override, n+".md")
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, contracts.Errorf(contracts.CodeInvalidConfig, "prompts: %s.md: %w", n, err).With("field", n+".md")
		case strings.TrimSpace(string(b)) == "":
			return nil, contracts.Errorf(contracts.CodeInvalidConfig, "prompts: %s.md is empty", n).With("field", n+".md")
		default:
			s[n] = string(b)
		}
	}
	s[Planner] = strings.ReplaceAll(s[Planner], "{{plan_rules}}", strings.TrimSuffix(planRules, "\n"))
	return s, nil
}

// checkNames refuses a root entry of override that is not a prompt's NAME.md.
func checkNames(override fs.FS) error {
	if override == nil {
		return nil
	}
	entries, err := fs.ReadDir(override, ".")
	if err != nil {
		return contracts.Errorf(contracts.CodeInvalidConfig, "prompts: %w", err).With("field", "prompts_dir")
	}
	for _, en := range entries {
		n := en.Name()
		if strings.HasPrefix(n, ".") {
			continue
		}
		if en.IsDir() || !slices.Contains(names, strings.TrimSuffix(n, ".md")) || !strings.HasSuffix(n, ".md") {
			return contracts.Errorf(contracts.CodeInvalidConfig, "prompts: %s overrides no prompt (want one of %s.md)", n, strings.Join(names, ".md, ")).
				With("field", n)
		}
	}
	return nil
}

// Defaults returns the embedded prompts.
func Defaults() Set {
	s, err := Load(nil)
	if err != nil {
		panic(err) // the embedded files are part of the build
	}
	return s
}
