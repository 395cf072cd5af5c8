package contracts

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendJSON appends d encoded exactly as json.Marshal encodes it, with
// the same errors. A store appends one entry at every step boundary, so
// what a step's entry holds (the header, step records, state) is written
// here field by field, without reflection; anything rarer (a whole run,
// plans, interrupts, decisions, errors, usage) goes to encoding/json.
func (d *RunDelta) AppendJSON(b []byte) ([]byte, error) {
	out, err := d.appendJSON(b, slices.Sorted(maps.Keys(d.State)), d.State)
	if err != nil {
		return d.appendMarshal(b) // encoding/json says what is wrong, as json.Marshal would
	}
	return out, nil
}

// appendJSON is AppendJSON with d.State given as its sorted keys and the
// map that holds their values. Its error is only a sign that json.Marshal
// fails too: it says no more.
func (d *RunDelta) appendJSON(b []byte, stateKeys []string, state map[string]json.RawMessage) ([]byte, error) {
	if d.Run != nil {
		return d.appendMarshal(b)
	}
	w := jsonWriter{b: b}
	w.int(`{"seq":`, d.Seq)
	w.time(`,"updated_at":`, d.UpdatedAt)
	if d.Status != "" {
		w.str(`,"status":`, string(d.Status))
	}
	if d.Goal != "" {
		w.str(`,"goal":`, d.Goal)
	}
	if d.ReplanCount != 0 {
		w.int(`,"replan_count":`, int64(d.ReplanCount))
	}
	if len(d.LLMCalls) > 0 {
		w.b = append(w.b, `,"llm_calls":{`...)
		for i, k := range slices.Sorted(maps.Keys(d.LLMCalls)) {
			w.key(i, k)
			w.int("", int64(d.LLMCalls[k]))
		}
		w.b = append(w.b, '}')
	}
	if !usageZero(d.Usage) {
		w.marshal(`,"usage":`, d.Usage)
	}
	if d.Interrupt != nil {
		w.marshal(`,"interrupt":`, d.Interrupt)
	}
	if d.Result != nil {
		w.marshal(`,"result":`, d.Result)
	}
	if d.Error != nil {
		w.marshal(`,"error":`, d.Error)
	}
	if len(d.Plans) > 0 {
		w.marshal(`,"plans":`, d.Plans)
	}
	if len(d.Policy) > 0 {
		w.marshal(`,"policy":`, d.Policy)
	}
	w.records(stateKeys, state, d.Steps)
	if len(d.Decisions) > 0 {
		w.marshal(`,"decisions":`, d.Decisions)
	}
	if w.err != nil {
		return nil, w.err
	}
	return append(w.b, '}'), nil
}

// records writes the "state" (the values of state under stateKeys, in
// that order) and "steps" members as json.Marshal writes them, each left
// out when empty: the bulk of an entry and of a run.
func (w *jsonWriter) records(stateKeys []string, state map[string]json.RawMessage, steps []StepRecord) {
	if len(stateKeys) > 0 {
		w.b = append(w.b, `,"state":{`...)
		for i, k := range stateKeys {
			w.key(i, k)
			w.raw("", state[k])
		}
		w.b = append(w.b, '}')
	}
	if len(steps) > 0 {
		w.b = append(w.b, `,"steps":[`...)
		for i := range steps {
			w.b = append(w.b, comma(i)...)
			w.step(&steps[i])
		}
		w.b = append(w.b, ']')
	}
}

// step writes s as json.Marshal writes a StepRecord.
func (w *jsonWriter) step(s *StepRecord) {
	w.str(`{"action_id":`, s.ActionID)
	w.str(`,"tool":`, s.Tool)
	w.int(`,"plan_version":`, int64(s.PlanVersion))
	w.int(`,"attempt":`, int64(s.Attempt))
	if s.IdempotencyKey != "" {
		w.str(`,"idempotency_key":`, s.IdempotencyKey)
	}
	if len(s.Payload) > 0 {
		w.raw(`,"payload":`, s.Payload)
	}
	if len(s.Result) > 0 {
		w.raw(`,"result":`, s.Result)
	}
	if len(s.Produced) > 0 {
		w.b = append(w.b, `,"produced":[`...)
		for i, k := range s.Produced {
			w.str(comma(i), k)
		}
		w.b = append(w.b, ']')
	}
	w.str(`,"status":`, string(s.Status))
	if s.Error != nil {
		w.marshal(`,"error":`, s.Error)
	}
	w.time(`,"started_at":`, s.StartedAt)
	if !s.EndedAt.IsZero() {
		w.time(`,"ended_at":`, s.EndedAt)
	}
	w.b = append(w.b, '}')
}

// jsonWriter appends JSON as encoding/json writes it (HTML-safe strings,
// compacted raw values), each value after its name and separator; the
// first error stops it.
type jsonWriter struct {
	b   []byte
	err error
}

func (w *jsonWriter) int(name string, n int64) {
	w.b = strconv.AppendInt(append(w.b, name...), n, 10)
}

// key writes the name of an object's i-th member.
func (w *jsonWriter) key(i int, k string) {
	w.str(comma(i), k)
	w.b = append(w.b, ':')
}

// str writes s, itself where no byte needs escaping, else as
// json.Marshal escapes it.
func (w *jsonWriter) str(name, s string) {
	w.b = append(w.b, name...)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			data, _ := json.Marshal(s) // a string always encodes
			w.b = append(w.b, data...)
			return
		}
	}
	w.b = append(append(append(w.b, '"'), s...), '"')
}

// time writes t as time.Time.MarshalJSON does; a time RFC 3339 cannot
// hold goes to MarshalJSON for its error.
func (w *jsonWriter) time(name string, t time.Time) {
	_, offset := t.Zone()
	if y := t.Year(); y < 0 || y > 9999 || offset <= -24*3600 || offset >= 24*3600 {
		w.marshal(name, t)
		return
	}
	w.b = append(t.AppendFormat(append(append(w.b, name...), '"'), time.RFC3339Nano), '"')
}

// raw writes a raw JSON value compacted and HTML-escaped, as json.Marshal
// writes a json.RawMessage.
func (w *jsonWriter) raw(name string, v json.RawMessage) {
	w.b = append(w.b, name...)
	if v == nil {
		w.b = append(w.b, "null"...)
		return
	}
	out := bytes.NewBuffer(w.b)
	if !bytes.ContainsAny(v, "<>&\u2028\u2029") {
		w.fail(json.Compact(out, v))
		w.b = out.Bytes()
		return
	}
	var c bytes.Buffer
	if w.fail(json.Compact(&c, v)) {
		return
	}
	json.HTMLEscape(out, c.Bytes())
	w.b = out.Bytes()
}

func (w *jsonWriter) marshal(name string, v any) {
	data, err := json.Marshal(v)
	if !w.fail(err) {
		w.b = append(append(w.b, name...), data...)
	}
}

func (w *jsonWriter) fail(err error) bool {
	if err != nil && w.err == nil {
		w.err = err
	}
	return w.err != nil
}

// appendMarshal appends d as json.Marshal encodes it. It marshals a copy,
// so that d itself may live on its caller's stack (Run.AppendDelta).
func (d *RunDelta) appendMarshal(b []byte) ([]byte, error) {
	c := *d
	return appendMarshal(b, &c)
}

// comma separates the items of a list or object after the first.
func comma(i int) string {
	if i == 0 {
		return ""
	}
	return ","
}

// usageZero reports whether omitzero leaves u out: every field zero (nil
// map and list; a float zero only as +0).
func usageZero(u RunUsage) bool {
	t := u.Total
	return u.ByRole == nil && t.InputTokens == 0 && t.OutputTokens == 0 && t.CachedTokens == 0 &&
		math.Float64bits(t.CostUSD) == 0 && t.Models == nil
}

// AppendJSON appends r encoded exactly as json.Marshal encodes it, with
// the same errors. A checkpoint holds the whole run, up to the run bound
// of results and state (64 MiB): json.Marshal would build it in a buffer
// grown by doubling, copy it out and keep the buffer in its pool, about
// three times the run's bytes at once. Here the run's header and its
// rarer parts are encoded first (they are small), the buffer is sized
// once for them and the step records and state, and those are written
// into it field by field.
func (r *Run) AppendJSON(b []byte) ([]byte, error) {
	head := jsonWriter{}
	head.int(`{"format_version":`, int64(r.FormatVersion))
	head.str(`,"id":`, r.ID)
	if r.UserID != "" {
		head.str(`,"user_id":`, r.UserID)
	}
	head.str(`,"goal":`, r.Goal)
	head.str(`,"status":`, string(r.Status))
	head.time(`,"created_at":`, r.CreatedAt)
	head.time(`,"updated_at":`, r.UpdatedAt)
	head.int(`,"seq":`, r.Seq)
	head.marshal(`,"options":`, r.Options)
	if r.SessionID != "" {
		head.str(`,"session_id":`, r.SessionID)
	}
	if len(r.Conversation) > 0 {
		head.marshal(`,"conversation":`, r.Conversation)
	}
	if r.Context != "" {
		head.str(`,"context":`, r.Context)
	}
	if len(r.Plans) > 0 {
		head.marshal(`,"plans":`, r.Plans)
	}
	if len(r.Policy) > 0 {
		head.marshal(`,"policy":`, r.Policy)
	}
	tail := jsonWriter{}
	if r.Interrupt != nil {
		tail.marshal(`,"interrupt":`, r.Interrupt)
	}
	if len(r.Decisions) > 0 {
		tail.marshal(`,"decisions":`, r.Decisions)
	}
	tail.int(`,"replan_count":`, int64(r.ReplanCount))
	if len(r.LLMCalls) > 0 {
		tail.marshal(`,"llm_calls":`, r.LLMCalls)
	}
	if !usageZero(r.Usage) {
		tail.marshal(`,"usage":`, r.Usage)
	}
	if r.Result != nil {
		tail.marshal(`,"result":`, r.Result)
	}
	if r.Error != nil {
		tail.marshal(`,"error":`, r.Error)
	}
	if head.err != nil || tail.err != nil {
		return appendMarshal(b, r)
	}
	w := jsonWriter{b: slices.Grow(b, len(head.b)+r.recordsSize()+len(tail.b)+1)}
	w.b = append(w.b, head.b...)
	w.records(slices.Sorted(maps.Keys(r.State)), r.State, r.Steps)
	if w.err != nil {
		return appendMarshal(b, r)
	}
	w.b = append(w.b, tail.b...)
	return append(w.b, '}'), nil
}

// recordsSize is about the bytes r's state and step records encode to:
// their raw JSON as it is, and a record's other fields at a generous
// guess. Raw JSON with spaces to compact encodes shorter, with <, >, & to
// escape longer (then the buffer grows once).
func (r *Run) recordsSize() int {
	n := 16
	for k, v := range r.State {
		n += len(k) + len(v) + 8
	}
	for i := range r.Steps {
		s := &r.Steps[i]
		n += 256 + len(s.ActionID) + len(s.Tool) + len(s.IdempotencyKey) + len(s.Payload) + len(s.Result)
		for _, k := range s.Produced {
			n += len(k) + 3
		}
		if s.Error != nil {
			n += 256 + len(s.Error.Message)
		}
	}
	return n
}

// appendMarshal appends v as json.Marshal encodes it: for its error.
func appendMarshal(b []byte, v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, data...), nil
}
