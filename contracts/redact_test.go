package contracts

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestRedact(t *testing.T) {
	in := map[string]any{"channel": "#general", "token": "xoxb-secret", "nested": map[string]any{"token": "kept"}}
	got := Redact(in, []string{"token", "password"})
	want := map[string]any{"channel": "#general", "token": Redacted, "nested": map[string]any{"token": "kept"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v", got)
	}
	if in["token"] != "xoxb-secret" {
		t.Fatal("Redact modified its input")
	}

	raw := json.RawMessage(`{"token":"xoxb-secret","text":"hi"}`)
	gotRaw, ok := Redact(raw, []string{"token"}).(json.RawMessage)
	if !ok || string(gotRaw) != `{"text":"hi","token":"[REDACTED]"}` {
		t.Fatalf("raw: %s", gotRaw)
	}
	if got := Redact(raw, []string{"password"}); string(got.(json.RawMessage)) != string(raw) {
		t.Fatalf("untouched raw changed: %s", got)
	}

	type payload struct {
		Password string `json:"password"`
		User     string `json:"user"`
	}
	if got := Redact(payload{"p", "u"}, []string{"password"}); !reflect.DeepEqual(got, map[string]any{"password": Redacted, "user": "u"}) {
		t.Fatalf("struct: %v", got)
	}
	if got := Redact([]any{"a"}, []string{"a"}); !reflect.DeepEqual(got, []any{"a"}) {
		t.Fatalf("array: %v", got)
	}
	if got := Redact(json.RawMessage(`{"token":"xoxb`), []string{"token"}); got != Redacted {
		t.Fatalf("unreadable payload leaked: %v", got)
	}
	if got := Redact(in, nil); !reflect.DeepEqual(got, in) {
		t.Fatal("no secret fields changed the payload")
	}
}
