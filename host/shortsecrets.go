package host

import (
	"maps"
	"path/filepath"
	"slices"
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
