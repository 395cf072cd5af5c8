package main_test

import (
	"strings"
	"testing"
)

// --timezone and --locale (over the timezone and locale keys) are the
// user's: a run made with them records them as its options, which the
// models are given with the current time there. A timezone Go does not
// know is error 1014 naming the key, and nothing runs.
func TestRunTimezoneAndLocale(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.ordo("", "run", "--plan", firstRun, "--yes", "--json", "--timezone", "Asia/Seoul", "--locale", "ko-KR")
	r.want(t, 0)
	if run := r.run(t); run.Options.Timezone != "Asia/Seoul" || run.Options.Locale != "ko-KR" {
		t.Errorf("options %+v", run.Options)
	}
	r = e.ordo("", "run", "--plan", firstRun, "--yes", "--timezone", "Mars/Olympus")
	r.want(t, 2)
	if !strings.Contains(r.stderr, "1014") || !strings.Contains(r.stderr, "timezone") {
		t.Errorf("bad timezone:\n%s", r.stderr)
	}
	e.ordo("", "run", "--plan", firstRun, "--yes", "--locale", "not a tag").want(t, 2)
}
