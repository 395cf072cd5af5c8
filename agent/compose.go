package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ordo-run/ordo/contracts"
)

type stepSummary struct {
	Summary string `json:"summary"`
	Intent  string `json:"intent,omitempty"`
	Status  string `json:"status"`
	Error   string `json:"error,omitempty"`
}

func (e *Engine) compose(ctx context.Context, run *contracts.Run) *contracts.RunResult {
	if e.deps.LLM == nil || run.Options.Direct {
		return &contracts.RunResult{Answer: e.templateAnswer(run), Composer: "template"}
	}
	var steps []stepSummary
	actions := indexActions(run)
	for _, s := range run.Steps {
		if s.Status == contracts.StepStarted {
			continue
		}
		a := actions.of(s)
		ss := stepSummary{Summary: describeAction(a), Intent: a.Intent, Status: string(s.Status)}
		if s.Error != nil {
			ss.Error = s.Error.Message
		}
		steps = append(steps, ss)
	}
	in := map[string]any{"goal": run.Goal, "status": run.Status, "state": run.State, "steps": steps, "locale": run.Options.Locale,
		"timezone": run.Options.Timezone, "now": e.localNow(run)}
	if n := len(run.Plans); n > 0 && run.Plans[n-1].Plan.FinalResponse != nil {
		in["final_response"] = run.Plans[n-1].Plan.FinalResponse
	}
	text, err := e.complete(ctx, run, "composer", in, nil)
	if err != nil || strings.TrimSpace(text) == "" {
		e.log.Warn("composer failed; using the template", "run_id", run.ID, "err", err)
		return &contracts.RunResult{Answer: e.templateAnswer(run), Composer: "template"}
	}
	return &contracts.RunResult{Answer: strings.TrimSpace(text), Composer: "llm"}
}

// templateWords are the template answer's own words in one language.
type templateWords struct {
	done, rejected, unfinished string // formats of the goal
	status                     map[contracts.StepStatus]string
	one, items                 string // a list of one; format of a longer list's length
}

// templateLanguages holds the languages template answers are written in,
// by the base of the run's locale; English for any other.
var templateLanguages = map[string]templateWords{
	"en": {done: "Done: %s", rejected: "Stopped: the plan for %q was rejected.", unfinished: "Could not finish %q",
		one: "1 item", items: "%d items"},
	"ko": {done: "완료: %s", rejected: "중단: %q 계획이 거부되었습니다.", unfinished: "끝내지 못했습니다: %q",
		status: map[contracts.StepStatus]string{contracts.StepSucceeded: "성공", contracts.StepFailed: "실패",
			contracts.StepSkipped: "건너뜀"},
		one: "항목 1개", items: "항목 %d개"},
}

// wordsFor picks the template answer's language from a locale (ko-KR: ko).
func wordsFor(locale string) templateWords {
	base, _, _ := strings.Cut(strings.ToLower(locale), "-")
	if w, ok := templateLanguages[base]; ok {
		return w
	}
	return templateLanguages["en"]
}

// statusWord is a step status in the answer's language.
func (w templateWords) statusWord(s contracts.StepStatus) string {
	if word, ok := w.status[s]; ok {
		return word
	}
	return string(s)
}

// templateAnswer is the deterministic answer: the outcome and one line per
// finished step, from the records alone, in the run's locale (English or
// Korean).
func (e *Engine) templateAnswer(run *contracts.Run) string {
	w := wordsFor(run.Options.Locale)
	var b strings.Builder
	switch run.Status {
	case contracts.RunCompleted:
		fmt.Fprintf(&b, w.done, run.Goal)
	case contracts.RunRejected:
		fmt.Fprintf(&b, w.rejected, run.Goal)
	default:
		fmt.Fprintf(&b, w.unfinished, run.Goal)
		if run.Error != nil {
			fmt.Fprintf(&b, ": %s", run.Error.Message)
		}
	}
	actions := indexActions(run)
	producers := map[string]int{} // a key set by one step only is the state's value
	for _, s := range run.Steps {
		for _, k := range s.Produced {
			producers[k]++
		}
	}
	for _, s := range run.Steps {
		if s.Status == contracts.StepStarted {
			continue
		}
		a := actions.of(s)
		fmt.Fprintf(&b, "\n- %s: %s", describeAction(a), w.statusWord(s.Status))
		if len(s.Produced) > 0 {
			var own map[string]json.RawMessage
			if slices.ContainsFunc(s.Produced, func(k string) bool { return producers[k] > 1 }) {
				own = e.producedBy(s)
			}
			var kv []string
			for _, k := range s.Produced {
				v, ok := own[k]
				if !ok {
					v = run.State[k]
				}
				kv = append(kv, k+"="+w.summarise(k, v))
			}
			fmt.Fprintf(&b, " (%s)", strings.Join(kv, ", "))
		}
	}
	return b.String()
}

// actionIndex finds the action a step record belongs to in one lookup,
// so that describing a run's steps stays linear in its length.
type actionIndex map[actionKey]contracts.Action

type actionKey struct {
	version int
	id      string
}

func indexActions(run *contracts.Run) actionIndex {
	idx := actionIndex{}
	for _, rev := range run.Plans {
		for _, a := range rev.Plan.Actions {
			idx[actionKey{rev.Version, a.ID}] = a
		}
	}
	return idx
}

func (idx actionIndex) of(s contracts.StepRecord) contracts.Action {
	if a, ok := idx[actionKey{s.PlanVersion, s.ActionID}]; ok {
		return a
	}
	return contracts.Action{ID: s.ActionID}
}

// producedBy re-reads what one step produced from its own result: a later
// step may have produced the same key, and the state holds only the last.
func (e *Engine) producedBy(s contracts.StepRecord) map[string]json.RawMessage {
	t, ok := e.deps.Tools.Lookup(s.Tool)
	if !ok || len(s.Result) == 0 {
		return nil
	}
	vals, err := t.ProduceKeys(s.Result, s.Produced)
	if err != nil {
		return nil
	}
	out := make(map[string]json.RawMessage, len(vals))
	for k, v := range vals {
		if b, err := json.Marshal(v); err == nil {
			out[k] = b
		}
	}
	return out
}

// summaryLimit bounds one state value in a template answer, in runes.
const summaryLimit = 120

// summarise shows a state value in a template answer without dumping it:
// a list as its length, text and JSON cut to summaryLimit runes, links
// (a key ending in url or link, or a string with "://") whole, since a
// cut link is useless.
func (w templateWords) summarise(key string, raw json.RawMessage) string {
	v, err := contracts.DecodeJSON(raw)
	if err != nil {
		return clipRunes(string(raw))
	}
	switch x := v.(type) {
	case []any:
		if len(x) == 1 {
			return w.one
		}
		return fmt.Sprintf(w.items, len(x))
	case string:
		k := strings.ToLower(key)
		if strings.HasSuffix(k, "url") || strings.HasSuffix(k, "link") || strings.Contains(x, "://") && !strings.ContainsAny(x, " \n") {
			return x
		}
		return strconv.Quote(clipRunes(x))
	}
	return clipRunes(string(raw))
}

// clipRunes cuts s to summaryLimit runes, marking the cut with "…".
func clipRunes(s string) string {
	if utf8.RuneCountInString(s) <= summaryLimit {
		return s
	}
	r := []rune(s)
	return string(r[:summaryLimit-1]) + "…"
}
