package contracts

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
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

// A Go plugin's decoder takes "API_KEY" or "Api_Key" for its api_key field
// (encoding/json matches names case-insensitively), so each spelling is
// the secret and is redacted.
func TestRedactMatchesFieldNamesAsJSONDecodes(t *testing.T) {
	var into struct {
		APIKey string `json:"api_key"`
	}
	payload := json.RawMessage(`{"name":"n","api_key":"shown-one","API_KEY":"s3cret-1","Api_Key":"s3cret-2"}`)
	if err := json.Unmarshal(payload, &into); err != nil || into.APIKey != "s3cret-2" {
		t.Fatalf("the decoder took %q (%v)", into.APIKey, err)
	}
	got := string(Redact(payload, []string{"api_key"}).(json.RawMessage))
	if want := `{"API_KEY":"[REDACTED]","Api_Key":"[REDACTED]","api_key":"[REDACTED]","name":"n"}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// A value the input schema marks writeOnly or format "password" makes the
// top-level field holding it secret, however deep it lies: in an object,
// in array items, behind a local $ref or a combinator. So does a listed
// path ("conn.token"): redaction works on top-level fields, and the path
// itself would hide nothing.
func TestSchemaMarksSecretFields(t *testing.T) {
	tool, err := NewTool(Contract{Tool: "db.connect", Service: "db", RiskLevel: RiskWrite, SecretFields: []string{"otp", "conn.token", "$.list[0].key", "dotted.name"},
		InputSchema: json.RawMessage(`{"type":"object","$defs":{"cred":{"type":"object","properties":{"key":{"type":"string","writeOnly":true}}}},
		 "properties":{
		  "host":{"type":"string"},"mail":{"type":"string","format":"email"},"open":{"type":"string","writeOnly":false},
		  "db":{"type":"object","properties":{"user":{"type":"string"},"password":{"type":"string","writeOnly":true}}},
		  "keys":{"type":"array","items":{"type":"object","properties":{"secret":{"type":"string","format":"password"}}}},
		  "auth":{"$ref":"#/$defs/cred"},
		  "either":{"anyOf":[{"type":"null"},{"type":"string","format":"password"}]},
		  "loop":{"$ref":"#/properties/loop"},
		  "pin":{"type":"string","format":"password"},
		  "conn":{"type":"object"},"list":{"type":"array"},"dotted.name":{"type":"string"}}}`),
		OutputSchema: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tool.Contract.SecretFields, []string{"auth", "conn", "db", "dotted.name", "either", "keys", "list", "otp", "pin"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("secret fields %v, want %v", got, want)
	}
	payload := json.RawMessage(`{"host":"h","db":{"user":"u","password":"s3cret-db"},"keys":[{"secret":"s3cret-key"}]}`)
	if got := string(Redact(payload, tool.Contract.SecretFields).(json.RawMessage)); got != `{"db":"[REDACTED]","host":"h","keys":"[REDACTED]"}` {
		t.Fatalf("redacted %s", got)
	}
}

// A Concealer hides the secret values a call was given wherever the
// answer repeats them: inside result strings and keys, in an error's
// message and details; values too short to look for, and answers without
// a secret, come back as they were.
func TestConcealer(t *testing.T) {
	c := NewConcealer(json.RawMessage(`{"user":"ada","password":"hunter22","pin":4711,"nested":{"k":["s3cret-deep"]},"otp":"12"}`),
		[]string{"PASSWORD", "pin", "nested", "otp"})
	got := string(c.Result(json.RawMessage(`{"said":"user ada password hunter22 pin 4711","hunter22":["s3cret-deep",12]}`)))
	if want := `{"[REDACTED]":["[REDACTED]",12],"said":"user ada password [REDACTED] pin [REDACTED]"}`; got != want {
		t.Fatalf("result %s, want %s", got, want)
	}
	clean := json.RawMessage(`{ "said": "ada" }`)
	if got := c.Result(clean); string(got) != string(clean) {
		t.Fatalf("a result without a secret changed: %s", got)
	}
	cause := errors.New("wrong password hunter22")
	err := Errorf(CodeToolFailed, "login: %w", cause).With("tool", "vault.login").With("said", []string{"s3cret-deep"})
	err.Retryable = true
	hidden := AsError(c.Error(err))
	if raw, _ := json.Marshal(hidden); strings.Contains(string(raw), "hunter22") || strings.Contains(string(raw), "s3cret") ||
		hidden.Message != "login: wrong password [REDACTED]" || hidden.Code != CodeToolFailed || !hidden.Retryable || hidden.Details["tool"] != "vault.login" {
		t.Fatalf("error %s", raw)
	}
	if errors.Unwrap(hidden) != nil {
		t.Fatal("the hidden error keeps a cause that repeats the secret")
	}
	if plain := Errorf(CodeToolFailed, "refused: %w", cause); c.Error(plain) == error(plain) {
		t.Fatal("an error repeating the secret came back as it was")
	}
	other := Errorf(CodeToolFailed, "no such user")
	if c.Error(other) != error(other) || c.Error(nil) != nil {
		t.Fatal("an error without a secret changed")
	}
	if (Concealer{}).Error(err) != error(err) {
		t.Fatal("a call without secrets changed its error")
	}
	env := ConcealEnv(map[string]string{"KEY": "sk-env-s3cret", "ROOT": "/srv/files", "ON": "1"})
	if got := env.Text("key sk-env-s3cret, root /srv/files, on 1"); got != "key [REDACTED], root /srv/files, on 1" {
		t.Fatalf("env: %s", got)
	}
}
