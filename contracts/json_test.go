package contracts

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestDecodeJSON(t *testing.T) {
	v, err := DecodeJSON([]byte(` {"n": 12345678901234567890, "f": 1.5} `))
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	if m["n"] != json.Number("12345678901234567890") || m["f"] != json.Number("1.5") {
		t.Fatalf("numbers: %#v", m)
	}
	for _, bad := range []string{``, `{`, `{"a":1} {"b":2}`, `{"a":1}x`, `nul`, `{'a':1}`} {
		if _, err := DecodeJSON([]byte(bad)); CodeOf(err) != CodeInvalidJSON {
			t.Fatalf("%q: %v", bad, err)
		}
	}
	e := wantCode(t, func() error { _, err := DecodeJSON([]byte(`{"a":}`)); return err }(), CodeInvalidJSON)
	if e.Details["offset"] != int64(6) {
		t.Fatalf("offset: %v", e.Details)
	}
}

func TestExtractJSON(t *testing.T) {
	obj := `{"a": {"b": "}"}, "c": [1, "{"]}`
	cases := []struct {
		name, text, want string
	}{
		{"bare object", obj, obj},
		{"padded with BOM", "\uFEFF\n " + obj + "\n", obj},
		{"json fence", "Here you go:\n```json\n" + obj + "\n```\nDone.", obj},
		{"plain fence", "```\n" + obj + "\n```", obj},
		{"fence wins over prose object", `Example {"x":1}` + "\n```json\n" + obj + "\n```", obj},
		{"object in prose", "The plan is " + obj + ". Tell me {if} it works.", obj},
		{"same object twice", obj + " again: " + obj, obj},
		{"escaped quote in string", `say {"q": "a \"}\" b"} now`, `{"q": "a \"}\" b"}`},
		{"nested picks outermost", `x {"o": {"i": 1}} y`, `{"o": {"i": 1}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ExtractJSON(tc.text)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
	refused := []struct{ name, text string }{
		{"no object", "I can't help with that."},
		{"array only", `[1, 2]`},
		{"trailing comma", "```json\n{\"a\": 1,}\n```"},
		{"two different objects", `first {"a":1} then {"b":2}`},
		{"two different fences", "```json\n{\"a\":1}\n```\n```json\n{\"b\":2}\n```"},
		{"unbalanced", `{"a": {"b": 1}`},
		{"inner object of a broken one", `{"a": {"b": 1},}`},
		{"object after an unclosed brace", `use { then {"a": 1}`},
		{"too large", string(make([]byte, MaxExtractBytes+1))},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := ExtractJSON(tc.text); CodeOf(err) != CodeInvalidJSON || got != nil {
				t.Fatalf("got %q, %v", got, err)
			}
		})
	}
}

// The word a model writes becomes the marker, and only the markers are
// taken: a value whose text is the word but that no model wrote as its
// word (a tool result bound in) stays.
func TestTakeMissing(t *testing.T) {
	v, err := DecodeJSON([]byte(`{
		"channel": "MISSING",
		"text": "hello MISSING",
		"blocks": [{"type": "section", "text": "MISSING"}, "MISSING", "ok"],
		"odd key": "MISSING",
		"it's": {"x": "MISSING"},
		"n": 1, "nil": null, "missing": "missing"
	}`))
	if err != nil {
		t.Fatal(err)
	}
	payload := MarkMissing(v).(map[string]any)
	payload["result"] = "MISSING" // bound from a tool: data
	want := []string{
		"$.blocks[0].text",
		"$.blocks[1]",
		"$.channel",
		"$['it\\'s'].x",
		"$['odd key']",
	}
	if got := TakeMissing(payload); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	data, err := json.Marshal(payload)
	if err != nil || string(data) != `{"blocks":[{"type":"section"},null,"ok"],"it's":{},"missing":"missing","n":1,"nil":null,"result":"MISSING","text":"hello MISSING"}` {
		t.Fatalf("after: %s %v", data, err)
	}
	if got := TakeMissing(payload); got != nil {
		t.Fatalf("taken twice: %v", got)
	}
	if got := TakeMissing(MarkMissing(MissingWord)); !reflect.DeepEqual(got, []string{"$"}) {
		t.Fatalf("root: %v", got)
	}
	if v, _ := DecodeJSON([]byte(`"MISSING"`)); TakeMissing(v) != nil {
		t.Fatal("decoded JSON holds a marker")
	}
}

// TestMissingEncodesAsTheWord: a payload still holding the marker, shown
// to a model or a person, says MISSING where the value is, not {} (which a
// model could send back as data); decoding that text gives the string,
// never the marker.
func TestMissingEncodesAsTheWord(t *testing.T) {
	out, err := json.Marshal(map[string]any{"to": Missing})
	if err != nil || string(out) != `{"to":"MISSING"}` {
		t.Fatalf("%s %v", out, err)
	}
	v, err := DecodeJSON(out)
	if err != nil || v.(map[string]any)["to"] == Missing {
		t.Fatalf("decoded %v %v: the marker came back from text", v, err)
	}
}
