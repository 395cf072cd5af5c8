package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/ordo-run/ordo/contracts"
)

type stepSummary struct {
	Summary string `json:"summary"`
	Intent  string `json:"intent,omitempty"`
	Status  string `json:"status"`
	Error   string `json:"error,omitempty"`
}

// composesWithModel says whether compose asks the model (else it fills
// the template at once).
func (e *Engine) composesWithModel(ctx context.Context, run *contracts.Run) bool {
	return e.model(ctx) != nil && !run.Options.Direct
}

func (e *Engine) compose(ctx context.Context, run *contracts.Run) *contracts.RunResult {
	if !e.composesWithModel(ctx, run) {
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
	state, _ := promptState(run.State, e.stateLimit())
	in := withTurns(run, map[string]any{"goal": run.Goal, "status": run.Status, "state": state, "steps": steps, "locale": run.Options.Locale,
		"timezone": run.Options.Timezone, "now": e.localNow(run)})
	if n := len(run.Plans); n > 0 && run.Plans[n-1].Plan.FinalResponse != nil {
		in["final_response"] = run.Plans[n-1].Plan.FinalResponse
	}
	text, err := e.complete(ctx, run, "composer", in, nil)
	if err != nil || strings.TrimSpace(text) == "" {
		e.log.Warn("composer failed; using the template", "run_id", run.ID, "err", err)
		return &contracts.RunResult{Answer: e.templateAnswer(run), Composer: "template"}
	}
	return &contracts.RunResult{Answer: printable(strings.TrimSpace(text)), Composer: "llm"}
}

// printable is an answer as a person may be shown it: without control
// characters but for line breaks and tabs, and without bidirectional-format
// characters (which reorder what a terminal shows). The answer is printed by
// `ordo run` and by MCP clients in terminals, and its text comes from a
// model (which may copy a tool's output), from tools' results or from a
// plan's summaries, any of which may hold an escape sequence that would
// act on the terminal (write the clipboard, clear the screen, rewrite a
// line).
func printable(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' && r != '\t' || unicode.Is(unicode.Bidi_Control, r) {
			return -1
		}
		return r
	}, s)
}

// templateWords are the template answer's own words in one language.
type templateWords struct {
	lang           string // its key in templateLanguages and whyUnfinished
	done, rejected string // formats of the goal
	unfinished     string // format of the goal and why
	status         map[contracts.StepStatus]string
	one, items     string // a list of one; format of a longer list's length
	step           string // format of a step's number, for a step nothing describes
}

// templateLanguages holds the languages template answers are written in,
// by the base of the run's locale; English for any other.
var templateLanguages = map[string]templateWords{
	"en": {lang: "en", done: "Done: %s", rejected: "Stopped: the plan for %q was rejected.", unfinished: "Could not finish %q: %s.",
		one: "1 item", items: "%d items", step: "Step %d"},
	"ko": {lang: "ko", done: "완료: %s", rejected: "중단: %q 계획이 거부되었습니다.", unfinished: "끝내지 못했습니다: %q (%s)",
		status: map[contracts.StepStatus]string{contracts.StepSucceeded: "성공", contracts.StepFailed: "실패",
			contracts.StepSkipped: "건너뜀"},
		one: "항목 1개", items: "항목 %d개", step: "%d단계"},
}

// whyUnfinished says, in each template language, why a run did not
// finish, by error code (else by its class, code/1000); 0 is the
// fallback. Error messages name actions and tools, which a template
// answer does not show.
var whyUnfinished = map[contracts.Code]map[string]string{
	contracts.CodePlanFailed:         {"en": "no valid plan could be made", "ko": "유효한 계획을 만들지 못했습니다"},
	contracts.CodeReplanExhausted:    {"en": "a step kept failing after re-planning", "ko": "다시 계획해도 단계가 계속 실패했습니다"},
	contracts.CodeVerificationFailed: {"en": "a step's result did not pass its checks", "ko": "단계의 결과가 검사를 통과하지 못했습니다"},
	contracts.CodeNoLLM:              {"en": "it needs a model and none is configured", "ko": "모델이 필요하지만 설정되어 있지 않습니다"},
	contracts.CodeCancelled:          {"en": "it was cancelled", "ko": "취소되었습니다"},
	contracts.CodeBudgetExceeded:     {"en": "its budget is spent", "ko": "예산을 모두 썼습니다"},
	contracts.CodePolicyDenied:       {"en": "policy does not allow one of its steps", "ko": "정책이 단계 하나를 허용하지 않습니다"},
	contracts.CodeScopeMissing:       {"en": "a step needs a permission you lack", "ko": "단계에 필요한 권한이 없습니다"},
	contracts.CodeToolTimeout:        {"en": "a step took too long", "ko": "단계가 너무 오래 걸렸습니다"},
	contracts.CodeToolUnavailable:    {"en": "a service it needs is unavailable; try again later", "ko": "필요한 서비스를 지금 쓸 수 없습니다. 나중에 다시 시도하세요"},
	1:                                {"en": "its plan or an input was not valid", "ko": "계획이나 입력이 올바르지 않습니다"},
	5:                                {"en": "it was stopped", "ko": "중단되었습니다"},
	6:                                {"en": "a step failed", "ko": "단계가 실패했습니다"},
	7:                                {"en": "the model failed", "ko": "모델 호출이 실패했습니다"},
	0:                                {"en": "something went wrong", "ko": "문제가 생겼습니다"},
}

// reason says why a run did not finish without its error's message.
func (w templateWords) reason(err *contracts.Error) string {
	if err != nil {
		if s, ok := whyUnfinished[err.Code]; ok {
			return s[w.lang]
		}
		if s, ok := whyUnfinished[err.Code/1000]; ok {
			return s[w.lang]
		}
	}
	return whyUnfinished[0][w.lang]
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
// Korean). It is for the person, so it shows no internal ids, state keys,
// tool names or raw error messages (the run record has them): a step is
// its summary (else its tool's description, else its number), a value is
// shown without its key, and id-like values are left out.
func (e *Engine) templateAnswer(run *contracts.Run) string {
	w := wordsFor(run.Options.Locale)
	var b strings.Builder
	b.Grow(64 * (1 + len(run.Steps))) // a line a step, about
	switch run.Status {
	case contracts.RunCompleted:
		fmt.Fprintf(&b, w.done, run.Goal)
	case contracts.RunRejected:
		fmt.Fprintf(&b, w.rejected, run.Goal)
	default:
		fmt.Fprintf(&b, w.unfinished, run.Goal, w.reason(run.Error))
	}
	actions := indexActions(run)
	producers := map[string]int{} // a key set by one step only is the state's value
	for _, s := range run.Steps {
		for _, k := range s.Produced {
			producers[k]++
		}
	}
	n := 0
	toolLabels := map[string]string{} // a tool's label, read once per answer
	for _, s := range run.Steps {
		if s.Status == contracts.StepStarted {
			continue
		}
		n++
		b.WriteString("\n- ")
		b.WriteString(e.stepLabel(w, actions.of(s), n, toolLabels))
		b.WriteString(": ")
		b.WriteString(w.statusWord(s.Status))
		if len(s.Produced) > 0 {
			var own map[string]json.RawMessage
			if slices.ContainsFunc(s.Produced, func(k string) bool { return producers[k] > 1 }) {
				own = e.producedBy(s)
			}
			shown := 0
			for _, k := range s.Produced {
				if idLike(k) {
					continue
				}
				v, ok := own[k]
				if !ok {
					v = run.State[k]
				}
				if shown == 0 {
					b.WriteString(" (")
				} else {
					b.WriteString(", ")
				}
				b.WriteString(w.summarise(k, v))
				shown++
			}
			if shown > 0 {
				b.WriteByte(')')
			}
		}
	}
	return printable(b.String())
}

// stepLabel names a step for a person: the action's summary, else the
// first sentence of its tool's description (unless it names the tool),
// else its number. toolLabels keeps the tools' labels found so far.
func (e *Engine) stepLabel(w templateWords, a contracts.Action, n int, toolLabels map[string]string) string {
	if a.Summary != "" {
		return a.Summary
	}
	label, seen := toolLabels[a.Tool]
	if !seen {
		label = e.toolLabel(a.Tool)
		toolLabels[a.Tool] = label
	}
	if label != "" {
		return label
	}
	return fmt.Sprintf(w.step, n)
}

// toolLabel is the first sentence of a tool's description, "" when there
// is none or it names the tool.
func (e *Engine) toolLabel(name string) string {
	t, ok := e.deps.Tools.Lookup(name)
	if !ok || strings.Contains(t.Contract.Description, name) {
		return ""
	}
	d := strings.TrimSpace(t.Contract.Description)
	if i := strings.Index(d, ". "); i > 0 {
		d = d[:i]
	}
	return clipTo(strings.TrimSuffix(d, "."), 80)
}

// idLike reports whether a state key holds an internal id (a page id, a
// message timestamp), which a template answer leaves out.
func idLike(key string) bool {
	k := strings.ToLower(key)
	return k == "id" || k == "ts" || strings.HasSuffix(k, "_id") || strings.HasSuffix(k, "_ids") || strings.HasSuffix(k, "_ts")
}

// actionIndex finds the action a step record belongs to in one lookup,
// so that describing a run's steps stays linear in its length.
type actionIndex map[actionKey]*contracts.Action

type actionKey struct {
	version int
	id      string
}

func indexActions(run *contracts.Run) actionIndex {
	idx := actionIndex{}
	for _, rev := range run.Plans {
		for i := range rev.Plan.Actions {
			idx[actionKey{rev.Version, rev.Plan.Actions[i].ID}] = &rev.Plan.Actions[i]
		}
	}
	return idx
}

func (idx actionIndex) of(s contracts.StepRecord) contracts.Action {
	if a, ok := idx[actionKey{s.PlanVersion, s.ActionID}]; ok {
		return *a
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
	if len(raw) > 0 && !strings.ContainsRune(" \t\r\n[\"", rune(raw[0])) {
		return clipRunes(string(raw)) // a number, literal or object: shown as it is, undecoded
	}
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
func clipRunes(s string) string { return clipTo(s, summaryLimit) }
