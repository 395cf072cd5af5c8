package contracts

import (
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Criterion is one parsed success criterion, checked by code against the
// run state so the verifier needs no model for the common cases.
//
// The language, one criterion per string:
//
//	KEY exists          the state holds KEY and it is not null
//	KEY non-empty       KEY exists and is not "", [] or {}
//	KEY == VALUE        KEY equals VALUE (also !=); VALUE is JSON
//	                    ("a b", 3, true, null, {...}) or a bare word (ok)
//	len(KEY) OP N       length of a string (runes), array or object;
//	                    OP is one of >= > <= < == !=
//
// KEY is a state key: a letter or _ then letters, digits, _ . : or -.
type Criterion struct {
	Key    string // the state key it tests
	Source string // the text it was parsed from
	kind   criterionKind
	op     string
	value  any // == / != operand, JSON-like
	n      int // len() operand
}

type criterionKind int

const (
	critExists criterionKind = iota + 1
	critNonEmpty
	critCompare
	critLen
)

const keyPattern = `([A-Za-z_][A-Za-z0-9_.:-]*)`

var (
	critLenRe     = regexp.MustCompile(`^len\(\s*` + keyPattern + `\s*\)\s*(>=|<=|==|!=|>|<)\s*([0-9]+)$`)
	critExistsRe  = regexp.MustCompile(`^` + keyPattern + `\s+(exists|non-empty)$`)
	critCompareRe = regexp.MustCompile(`^` + keyPattern + `\s*(==|!=)\s*(.+)$`)
	bareWord      = regexp.MustCompile(`^[A-Za-z0-9_.:/@+-]+$`)
)

// ParseCriterion parses one criterion; text outside the language is
// CodeInvalidInput (the verifier may then hand it to a model).
func ParseCriterion(s string) (Criterion, error) {
	src := strings.TrimSpace(s)
	c := Criterion{Source: src}
	if m := critLenRe.FindStringSubmatch(src); m != nil {
		n, err := strconv.Atoi(m[3])
		if err != nil {
			return Criterion{}, criterionError(src, "length %q is too large", m[3])
		}
		c.Key, c.kind, c.op, c.n = m[1], critLen, m[2], n
		return c, nil
	}
	if m := critExistsRe.FindStringSubmatch(src); m != nil {
		c.Key, c.kind = m[1], critExists
		if m[2] == "non-empty" {
			c.kind = critNonEmpty
		}
		return c, nil
	}
	if m := critCompareRe.FindStringSubmatch(src); m != nil {
		operand := strings.TrimSpace(m[3])
		v, err := DecodeJSON([]byte(operand))
		if err != nil {
			if !bareWord.MatchString(operand) {
				return Criterion{}, criterionError(src, "value %q is neither JSON nor a bare word", operand)
			}
			v = operand
		}
		c.Key, c.kind, c.op, c.value = m[1], critCompare, m[2], v
		return c, nil
	}
	return Criterion{}, criterionError(src, "want `KEY exists`, `KEY non-empty`, `KEY == VALUE` or `len(KEY) >= N`")
}

func criterionError(src, format string, args ...any) error {
	return Errorf(CodeInvalidInput, "success criterion %q: "+format, append([]any{src}, args...)...).
		With("field", "success_criteria").With("criterion", src)
}

// Check evaluates the criterion against state. Values may be JSON-like,
// json.RawMessage (as Run.State holds them) or any JSON-encodable Go value.
// why says what was found, for the step record and a re-plan prompt.
func (c Criterion) Check(state map[string]any) (ok bool, why string) {
	raw, present := state[c.Key]
	if c.kind == 0 {
		return false, "criterion was not parsed"
	}
	if !present {
		return false, c.Key + " is missing"
	}
	v, err := jsonValue(raw)
	if err != nil {
		return false, fmt.Sprintf("%s is not a JSON value: %v", c.Key, err)
	}
	switch c.kind {
	case critExists:
		if v == nil {
			return false, c.Key + " is null"
		}
		return true, c.Key + " exists"
	case critNonEmpty:
		if n, ok := length(v); v == nil || ok && n == 0 {
			return false, c.Key + " is empty"
		}
		return true, c.Key + " is non-empty"
	case critCompare:
		eq := jsonEqual(v, c.value)
		if eq == (c.op == "==") {
			return true, c.Source
		}
		got, _ := json.Marshal(v)
		return false, fmt.Sprintf("%s is %s", c.Key, got)
	default:
		n, ok := length(v)
		if !ok {
			return false, fmt.Sprintf("%s has no length (%T)", c.Key, v)
		}
		if compareInts(n, c.op, c.n) {
			return true, fmt.Sprintf("len(%s) is %d", c.Key, n)
		}
		return false, fmt.Sprintf("len(%s) is %d, want %s %d", c.Key, n, c.op, c.n)
	}
}

func length(v any) (int, bool) {
	switch v := v.(type) {
	case string:
		return utf8.RuneCountInString(v), true
	case []any:
		return len(v), true
	case map[string]any:
		return len(v), true
	}
	return 0, false
}

func compareInts(a int, op string, b int) bool {
	switch op {
	case ">=":
		return a >= b
	case ">":
		return a > b
	case "<=":
		return a <= b
	case "<":
		return a < b
	case "==":
		return a == b
	}
	return a != b
}

// jsonEqual compares JSON-like values, numbers by value (1 == 1.0).
func jsonEqual(a, b any) bool {
	if ra, ok := number(a); ok {
		rb, ok := number(b)
		return ok && ra.Cmp(rb) == 0
	}
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, av := range a {
			bv, ok := bm[k]
			if !ok || !jsonEqual(av, bv) {
				return false
			}
		}
		return true
	case []any:
		bs, ok := b.([]any)
		if !ok || len(a) != len(bs) {
			return false
		}
		for i := range a {
			if !jsonEqual(a[i], bs[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// number reads any JSON-like number exactly.
func number(v any) (*big.Rat, bool) {
	if n, ok := v.(json.Number); ok {
		return new(big.Rat).SetString(n.String())
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return new(big.Rat).SetInt64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return new(big.Rat).SetUint64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		r := new(big.Rat)
		return r, r.SetFloat64(rv.Float()) != nil
	}
	return nil, false
}
