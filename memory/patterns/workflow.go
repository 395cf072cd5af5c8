package patterns

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// Template is a plan saved under a name, to run again with new inputs.
type Template struct {
	ID      string
	Name    string
	Plan    contracts.Plan
	SavedAt time.Time
}

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
	m.mu.Lock()
	defer m.mu.Unlock()
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
	return Template{ID: r.ID, Name: r.Name, Plan: *r.Plan, SavedAt: r.CreatedAt}
}
