package toolerr

import (
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestErrorsStaySmall: an error quoting a payload value is cut, message
// and details, so it always fits what the host takes from a plugin: a
// 3 MB page id made an 18 MB error (%q escapes a control byte to 4 bytes
// and JSON the backslash again) that failed the call with a gRPC size
// error and went into the run store.
func TestErrorsStaySmall(t *testing.T) {
	huge := strings.Repeat("\x01é", 1<<20)
	for _, e := range []error{
		Refuse("page_id", "page_id %q: no such page", huge),
		Failed("webhook said %s", huge),
		Transient("busy: %s", huge),
		FromOS("path", huge, fs.ErrNotExist),
		FromOS("path", huge, errors.New("denied")),
	} {
		data, _ := json.Marshal(e)
		if len(data) > 8*(MaxMessage+MaxShown)+200 {
			t.Errorf("error of %d bytes as JSON: %.100s", len(data), data)
		}
		if msg := e.Error(); !utf8.ValidString(msg) || !strings.HasSuffix(msg, "…") {
			t.Errorf("message not cut cleanly: %.60q…%q", msg, msg[max(0, len(msg)-20):])
		}
	}
	if got := Shown("short"); got != "short" {
		t.Errorf("Shown(short) = %q", got)
	}
}
