package agent

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// What a person types into a tool's secret_fields — an answer to an
// input_required question, a field of an edited or retried payload — never
// reaches the run log, and so never an event, a client or the console:
// the decision is recorded with those values redacted and the engine that
// takes the decision keeps the real ones in memory for the call it allows
// (for an hour at the most).
// A run resumed by another process, or after a restart, finds only the
// marker and asks the person for the values again (input_required) rather
// than calling the tool with it.

// typedSecrets holds the secret values people typed, per run, plan version
// and action, until the run ends here or, when another process finishes
// it, for typedSecretsTTL.
type typedSecrets struct {
	mu sync.Mutex
	m  map[string]*runSecrets
}

type runSecrets struct {
	at     time.Time                 // when the last value was typed
	values map[string]map[string]any // action key -> payload path -> value
}

// typedSecretsTTL bounds how long a typed value waits for its call; the
// person is asked again after it.
const typedSecretsTTL = time.Hour

func secretKey(version int, actionID string) string {
	return "v" + strconv.Itoa(version) + "/" + actionID
}

func (s *typedSecrets) keep(now time.Time, runID, key string, values map[string]any) {
	if len(values) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, r := range s.m {
		if now.Sub(r.at) > typedSecretsTTL {
			delete(s.m, id)
		}
	}
	if s.m == nil {
		s.m = map[string]*runSecrets{}
	}
	r := s.m[runID]
	if r == nil {
		r = &runSecrets{values: map[string]map[string]any{}}
		s.m[runID] = r
	}
	r.at = now
	if r.values[key] == nil {
		r.values[key] = map[string]any{}
	}
	maps.Copy(r.values[key], values)
}

func (s *typedSecrets) get(now time.Time, runID, key string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.m[runID]
	if r == nil || now.Sub(r.at) > typedSecretsTTL {
		return nil
	}
	return maps.Clone(r.values[key])
}

// forget drops a finished run's values.
func (s *typedSecrets) forget(runID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, runID)
}

// hideTypedSecrets returns d as the run records it: the answers to
// secret fields and the secret fields of an edited or retried payload
// replaced by contracts.Redacted. The real values are kept for the run's
// call (see typedSecrets). A value that already is the marker (a payload
// shown redacted and sent back unedited) is left as it is.
func (e *Engine) hideTypedSecrets(runID string, in contracts.Interrupt, d contracts.Decision) contracts.Decision {
	tool, ok := e.deps.Tools.Lookup(in.Tool)
	if !ok || len(tool.Contract.SecretFields) == 0 {
		return d
	}
	kept := map[string]any{}
	if len(d.Answers) > 0 {
		answers := maps.Clone(d.Answers)
		for path, v := range d.Answers {
			if secretField(tool, path) && v != contracts.Redacted {
				kept[path] = v
				answers[path] = contracts.Redacted
			}
		}
		d.Answers = answers
	}
	if len(d.Payload) > 0 {
		var obj map[string]any
		if json.Unmarshal(d.Payload, &obj) == nil {
			for f, v := range obj {
				if contracts.IsSecretField(tool.Contract.SecretFields, f) && v != contracts.Redacted {
					kept["$."+f] = v
				}
			}
			d.Payload = redact(tool, d.Payload)
		}
	}
	e.typed.keep(e.now(), runID, secretKey(in.PlanVersion, in.ActionID), kept)
	return d
}

// restoreSecrets puts real values back into the secret fields of the
// payload action a's decisions give, where people saw or sent the marker:
// what they typed (held in memory), else what the plan itself binds
// there (planBound); a field with neither is left out and its path
// returned (missing), so the person is asked for it.
func (e *Engine) restoreSecrets(run *contracts.Run, version int, a contracts.Action, tool *contracts.Tool, state map[string]any, payload json.RawMessage) (json.RawMessage, []string, error) {
	if len(tool.Contract.SecretFields) == 0 || len(payload) == 0 {
		return payload, nil, nil
	}
	var err error
	if typed := e.typed.get(e.now(), run.ID, secretKey(version, a.ID)); len(typed) > 0 {
		if payload, err = applyAnswers(payload, typed); err != nil {
			return nil, nil, err
		}
	}
	var obj map[string]any
	if json.Unmarshal(payload, &obj) != nil {
		return payload, nil, nil
	}
	var bound map[string]any
	changed := false
	for f, v := range obj {
		if !contracts.IsSecretField(tool.Contract.SecretFields, f) || !holdsRedacted(v) {
			continue
		}
		if bound == nil {
			if bound, err = planBound(a, tool, state); err != nil {
				return nil, nil, err
			}
		}
		if v, ok := bound[f]; ok && !holdsRedacted(v) {
			obj[f] = v
		} else {
			obj[f] = contracts.Missing
		}
		changed = true
	}
	if !changed {
		return payload, nil, nil
	}
	missing := contracts.TakeMissing(obj)
	payload, err = json.Marshal(obj)
	return payload, missing, err
}

// withoutSecrets is values (payload paths -> values a model wrote) without
// the paths that lie in tool's secret fields.
func withoutSecrets(tool *contracts.Tool, values map[string]any) map[string]any {
	out := maps.Clone(values)
	maps.DeleteFunc(out, func(path string, _ any) bool { return secretField(tool, path) })
	return out
}

// shownAction is a as a model is shown it (the filler, the critic, the
// planner's past plans): the
// literal values of tool's secret fields in its inputs as the marker. No
// model writes them (see bind), so none needs to read them.
func shownAction(a contracts.Action, tool *contracts.Tool) contracts.Action {
	if in, ok := contracts.Redact(a.Inputs, tool.Contract.SecretFields).(map[string]any); ok {
		a.Inputs = in
	}
	return a
}

// secretPaths are the paths among fields that lie in tool's secret fields.
func secretPaths(tool *contracts.Tool, fields []string) []string {
	var out []string
	for _, f := range fields {
		if secretField(tool, f) {
			out = append(out, f)
		}
	}
	return out
}

// holdsRedacted reports whether v is the marker or holds it somewhere.
func holdsRedacted(v any) bool {
	switch v := v.(type) {
	case string:
		return v == contracts.Redacted
	case map[string]any:
		for _, x := range v {
			if holdsRedacted(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if holdsRedacted(x) {
				return true
			}
		}
	}
	return false
}

// withoutSecretInputs is p as it is remembered (pattern memory's examples,
// a saved template): without the literal values its actions give their
// tools' secret fields — a credential written into a plan is for that run;
// a run of the template asks for it again (input_required, unseen) — and
// without any input of an action whose tool left the catalog, whose secret
// fields are unknown. p itself is not changed.
func withoutSecretInputs(p contracts.Plan, tools Tools) contracts.Plan {
	p.Actions = slices.Clone(p.Actions)
	for i, a := range p.Actions {
		tool, known := tools.Lookup(a.Tool)
		if known && len(tool.Contract.SecretFields) == 0 {
			continue
		}
		in := maps.Clone(a.Inputs)
		maps.DeleteFunc(in, func(f string, _ any) bool { return !known || contracts.IsSecretField(tool.Contract.SecretFields, f) })
		p.Actions[i].Inputs = in
	}
	return p
}
