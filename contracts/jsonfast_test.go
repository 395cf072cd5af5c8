package contracts

import (
	"bytes"
	"reflect"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeJSON holds decodeFast to encoding/json: whatever it accepts,
// encoding/json accepts and decodes to the same value; and it leaves to
// encoding/json only bad text and the strings it repairs (surrogate
// escapes, invalid UTF-8).
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range decodeCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if CheckJSONDepth(data, MaxJSONDepth) != nil {
			return
		}
		fast, ok := decodeFast(data)
		std, err := decodeStd(data)
		switch {
		case ok && err != nil:
			t.Fatalf("decodeFast accepted %q, encoding/json says %v", data, err)
		case ok && !reflect.DeepEqual(fast, std):
			t.Fatalf("%q: decodeFast %#v, encoding/json %#v", data, fast, std)
		case !ok && err == nil && utf8.Valid(data) && !bytes.Contains(data, []byte(`\u`)):
			t.Fatalf("decodeFast refused %q, which encoding/json decodes", data)
		}
	})
}

var decodeCases = []string{
	`{"text":"hi"}`, ` {"a":[1,-2.5e+3,0,true,false,null,{}],"b":[],"":""} `, `"x"`, `-0`, `1E9`,
	`{"a":1,"a":2}`, `"\"\\\/\b\f\n\r\t\u00e9\u0000"`, `"한국어 é"`, `"\ud83d\ude00"`, `"\udc00"`,
	"\"\xff\"", `01`, `1.`, `.5`, `-`, `1e`, `{"a" 1}`, `{"a":1,}`, `[1,]`, `[1 2]`, `tru`, `nulll`,
	`{"a":1} x`, `{"a":1}{}`, "", " ", "\"a\x01\"", `"\x"`, `"\u12"`, `"abc`, "\ufeff{}",
}

// TestDecodeJSONAgreesWithEncodingJSON runs the seed cases as a plain test:
// the same value as encoding/json's, or the same error.
func TestDecodeJSONAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range decodeCases {
		got, err := DecodeJSON([]byte(s))
		want, werr := decodeStd([]byte(s))
		if (err == nil) != (werr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: DecodeJSON %#v, %v; encoding/json %#v, %v", s, got, err, want, werr)
		}
		if err != nil && (CodeOf(err) != CodeInvalidJSON || err.Error() != werr.Error()) {
			t.Errorf("%q: error %v, want encoding/json's %v", s, err, werr)
		}
	}
}
