package host

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ordo-run/ordo/contracts"
)

// warnShortSecrets warns, naming them (never their values), of a source's
// configured secrets shorter than contracts.MinConcealed: they are not
// hidden where a log line, an error or an answer repeats them, since
// hiding every "1" or "on" would blank what holds it. The values are an
// env's (absolute paths excepted, as contracts.ConcealEnv does) and the
// named secrets beside it (a bearer token, a URL secret).
func (h *Host) warnShortSecrets(kind, name string, env map[string]string, named map[string]string) {
	var short []string
	check := func(key, v string) {
		if v != "" && utf8.RuneCountInString(v) < contracts.MinConcealed {
			short = append(short, key)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if !filepath.IsAbs(env[k]) {
			check("env."+k, env[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(named)) {
		check(k, named[k])
	}
	if len(short) > 0 {
		h.log.Warn("configured secrets too short to be hidden where repeated (logs, errors, answers)",
			kind, name, "keys", short, "min_length", contracts.MinConcealed)
	}
}

// secretNames are what an env variable's name holds, in any case, when
// its value is a credential: API_KEY, GITHUB_TOKEN, DB_PASSWORD, ….
var secretNames = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "AUTH", "CREDENTIAL", "WEBHOOK", "PRIVATE"}

// answerSecrets hides, in a source's tools' answers, the values of the env
// variables whose name says they hold a credential (secretNames), and more
// (an upstream's bearer token, URL secret and URL keys). Not every env
// value, as its stderr lines hide: a mode or a region ("us-east-1") is
// data a tool's answers may hold and a plan may read.
func answerSecrets(env map[string]string, more ...string) contracts.Concealer {
	values := more
	for k, v := range env {
		if secretName(k) {
			values = append(values, v)
		}
	}
	return contracts.Conceal(values...)
}

// secretName reports whether a name (an env variable's, a URL query
// parameter's) says its value is a credential.
func secretName(name string) bool {
	return slices.ContainsFunc(secretNames, func(n string) bool { return strings.Contains(strings.ToUpper(name), n) })
}
