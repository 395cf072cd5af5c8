package patterns

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/ordo-run/ordo/contracts"
)

// Template is a plan saved under a name, to run again with new inputs.
type Template struct {
	ID      string
	Name    string
	Plan    contracts.Plan
	SavedAt time.Time
	// Successes and Failures count the finished runs planned from it
	// (collected like every finished run); LastUsed is the latest.
	Successes int
	Failures  int
	LastUsed  time.Time
	// Learned: the collector made it from a plan that kept working.
	Learned bool
}

// TemplateMatch is the user's saved template most like a goal.
type TemplateMatch struct {
	Name  string  `json:"name"`
	Score float64 `json:"score"` // cosine similarity of the goal to the template's name and goal
}

// TemplateSourcePrefix starts the plan revision reason of a run planned
// from a template ("template NAME"): the collector credits that template.
const TemplateSourcePrefix = "template "

// templateID is deterministic, so saving a name again replaces it.
func templateID(user, name string) string {
	h := sha256.Sum256([]byte(user + "\x00" + name))
	return "wf-" + hex.EncodeToString(h[:12])
}

// SaveTemplate stores plan as the user's template name, replacing one of
// the same name. The plan needs at least one action; it is checked again
// against the live catalog when the template is run.
func (m *Memory) SaveTemplate(ctx context.Context, user, name string, plan contracts.Plan) error {
	if err := checkName("user", user, true); err != nil {
		return err
	}
	if err := checkName("name", name, false); err != nil {
		return err
	}
	if len(plan.Actions) == 0 {
		return contracts.Errorf(contracts.CodeInvalidInput, "template %q has no actions", name).With("field", "plan")
	}
	now := time.Now()
	p := plan
	r := Record{ID: templateID(user, name), Namespace: NSWorkflow, User: user, Name: name,
		Text: strings.TrimSpace(name + " " + plan.Goal), Plan: &p, CreatedAt: now, LastUsed: now}
	if err := tooBig(r); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.cols[NSWorkflow].GetByID(ctx, r.ID); err != nil {
		room, err := m.makeRoom(ctx, NSWorkflow, user)
		if err != nil {
			return err
		}
		if !room {
			return contracts.Errorf(contracts.CodeInvalidInput, "template %q would be one more than the %d templates kept; delete one first", name, m.opts.MaxRecords).
				With("field", "name").With("limit", m.opts.MaxRecords)
		}
	}
	return m.put(ctx, r)
}

// Template returns the user's template name, or a coded error naming it.
func (m *Memory) Template(ctx context.Context, user, name string) (Template, error) {
	if err := checkName("user", user, true); err != nil {
		return Template{}, err
	}
	if err := checkName("name", name, false); err != nil {
		return Template{}, err
	}
	d, err := m.cols[NSWorkflow].GetByID(ctx, templateID(user, name))
	if err != nil {
		return Template{}, contracts.Errorf(contracts.CodeInvalidInput, "no template named %q", name).With("field", "name")
	}
	r, err := decodeRecord(d.Metadata[metaRecord])
	if err != nil {
		return Template{}, err
	}
	return toTemplate(r), nil
}

// Templates lists the user's templates by name.
func (m *Memory) Templates(ctx context.Context, user string) ([]Template, error) {
	rs, err := m.List(ctx, user, NSWorkflow)
	if err != nil {
		return nil, err
	}
	out := make([]Template, len(rs))
	for i, r := range rs {
		out[i] = toTemplate(r)
	}
	slices.SortFunc(out, func(a, b Template) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func toTemplate(r Record) Template {
	return Template{ID: r.ID, Name: r.Name, Plan: *r.Plan, SavedAt: r.CreatedAt, Successes: r.Successes, Failures: r.Failures, LastUsed: r.LastUsed,
		Learned: r.Learned}
}

// learnAfter is how many completed runs of one goal's plan make it a
// learned template: once may be luck, twice is a habit worth offering.
const learnAfter = 2

// learnTemplate keeps a plan that worked learnAfter times (the plan
// record r) as a workflow template named after its goal, so that completed
// runs feed the workflow namespace without anyone saving them: the plan
// result offers it for a like goal, and run_template runs it without a
// planner call. A template a person saved under that name is never
// replaced; a learned one follows the latest plan that worked. Caller
// holds m.mu.
func (m *Memory) learnTemplate(ctx context.Context, r Record, at time.Time) error {
	name := learnedName(r.Text)
	if name == "" || len(r.Plan.Actions) == 0 {
		return nil
	}
	t := Record{ID: templateID(r.User, name), Namespace: NSWorkflow, User: r.User, Name: name, Learned: true,
		Text: strings.TrimSpace(name + " " + r.Plan.Goal), Plan: r.Plan, CreatedAt: at, LastUsed: at}
	if d, err := m.cols[NSWorkflow].GetByID(ctx, t.ID); err == nil {
		old, err := decodeRecord(d.Metadata[metaRecord])
		if err != nil || !old.Learned {
			return err
		}
		t.CreatedAt, t.Successes, t.Failures, t.LastUsed = old.CreatedAt, old.Successes, old.Failures, old.LastUsed
	} else if room, err := m.makeRoom(ctx, NSWorkflow, r.User); !room {
		return err // full: nothing is learned
	}
	return m.put(ctx, t)
}

// learnedName is a learned template's name: "learned-" and the goal's
// first six words, lower case, joined by hyphens ("" for a goal with no
// word).
func learnedName(goal string) string {
	words := strings.FieldsFunc(strings.ToLower(goal), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) == 0 {
		return ""
	}
	return "learned-" + strings.Join(words[:min(len(words), 6)], "-")
}

// MatchTemplate returns the user's template most like goal when it is at
// least Options.MinSimilarity alike (nil otherwise): what the plan result
// offers to run instead of planning.
func (m *Memory) MatchTemplate(ctx context.Context, user, goal string) (*TemplateMatch, error) {
	if err := checkQuery(user, goal, "goal"); err != nil {
		return nil, err
	}
	near, err := m.nearest(ctx, NSWorkflow, map[string]string{metaUser: user}, goal, 1)
	if err != nil || len(near) == 0 || near[0].sim < m.opts.MinSimilarity {
		return nil, err
	}
	return &TemplateMatch{Name: near[0].Name, Score: near[0].sim}, nil
}

// observeTemplate is the use of a template a finished run shows: its plan
// came from the template named in its first revision.
func observeTemplate(run *contracts.Run, success, failure int) (Record, bool) {
	if len(run.Plans) == 0 || run.Plans[0].Source != "template" || success+failure == 0 {
		return Record{}, false
	}
	name, ok := strings.CutPrefix(run.Plans[0].Reason, TemplateSourcePrefix)
	if !ok || name == "" {
		return Record{}, false
	}
	return Record{Namespace: NSWorkflow, User: run.UserID, Name: name, Successes: success, Failures: failure}, true
}

// countTemplateUse adds a run's outcome to the template it was planned
// from; a template deleted since is not brought back. Caller holds m.mu.
func (m *Memory) countTemplateUse(ctx context.Context, obs Record, at time.Time) error {
	d, err := m.cols[NSWorkflow].GetByID(ctx, templateID(obs.User, obs.Name))
	if err != nil {
		return nil
	}
	r, err := decodeRecord(d.Metadata[metaRecord])
	if err != nil {
		return err
	}
	r.Successes += obs.Successes
	r.Failures += obs.Failures
	r.LastUsed = at
	return m.store(ctx, r, d.Embedding)
}
