package cli

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseInputs(t *testing.T) {
	got, err := parseInputs([]string{"a1.city=Busan", "a1.n=5", `a2.values.who="the team"`, "a3.on=true", "a4.text=", `a5.obj={"k":[1]}`, "a6.s=a=b"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	want := `{"a1.city":"Busan","a1.n":5,"a2.values.who":"the team","a3.on":true,"a4.text":"","a5.obj":{"k":[1]},"a6.s":"a=b"}`
	if string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
	for _, bad := range [][]string{{"city=Busan"}, {"a1.city"}, {"a1.x=1", "a1.x=2"}} {
		var ue *usageErr
		if _, err := parseInputs(bad); !errors.As(err, &ue) {
			t.Errorf("%q: %v, want a usage error", bad, err)
		}
	}
}

// FuzzParseInputs: any flag value parses into ACTION.FIELD keys or is a
// usage error; never a panic.
func FuzzParseInputs(f *testing.F) {
	f.Add("a1.city=Busan")
	f.Add(`a2.values.who={"x":1}`)
	f.Add("=")
	f.Add("a.b=[")
	f.Fuzz(func(t *testing.T, flag string) {
		got, err := parseInputs([]string{flag})
		if err != nil {
			var ue *usageErr
			if !errors.As(err, &ue) {
				t.Fatalf("not a usage error: %v", err)
			}
			return
		}
		for k := range got {
			if !strings.Contains(k, ".") {
				t.Fatalf("key %q has no action", k)
			}
		}
	})
}
