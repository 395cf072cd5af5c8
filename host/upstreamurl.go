package host

import (
	"net/url"
	"strings"
	"unicode"
)

// URLSecretPlaceholder marks where an upstream URL takes its URLSecret:
// https://mcp.example.com/s/{secret}/mcp. The URL is kept, logged and
// shown with the placeholder; only the request sent holds the secret.
const URLSecretPlaceholder = "{secret}"

// HiddenURLPart stands for a secret part of a URL where it is shown.
const HiddenURLPart = "HIDDEN"

// ShownURL is raw as Ordo shows it (sources, upstream status, config
// show, errors): the password of its user info, every value of its query,
// its fragment, and every path segment or query name that looks like a key
// (TokenLike) are HiddenURLPart; the URLSecretPlaceholder is kept. An unparsable URL is
// hidden whole: it may be anything.
func ShownURL(raw string) string {
	u, err := url.Parse(raw)
	if raw == "" {
		return ""
	}
	if err != nil {
		return HiddenURLPart
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), HiddenURLPart)
	}
	if u.RawQuery != "" {
		q := url.Values{}
		for k := range u.Query() {
			if TokenLike(k) { // ?KEY, without a name
				k = HiddenURLPart
			}
			q[k] = []string{HiddenURLPart}
		}
		u.RawQuery = q.Encode()
	}
	if u.Fragment != "" { // never sent, but shown
		u.Fragment = HiddenURLPart
	}
	if u.Opaque != "" || u.Host == "" {
		return HiddenURLPart // not scheme://host/path: nothing to keep
	}
	segs := strings.Split(u.EscapedPath(), "/")
	for i, seg := range segs {
		switch p, err := url.PathUnescape(seg); {
		case err != nil || TokenLike(p):
			segs[i] = HiddenURLPart
		case p == URLSecretPlaceholder:
			segs[i] = p
		}
	}
	authority := u.Host
	if u.User != nil {
		authority = u.User.String() + "@" + authority
	}
	u.Opaque = "//" + authority + strings.Join(segs, "/") // written as is
	return u.String()
}

// TokenLike reports whether a URL path segment looks like a key and is
// hidden where the URL is shown: 16 characters or more, mixing at least
// two of lower-case letters, upper-case letters and digits (a token, a
// UUID, hex or base64; not "mcp", "v1", "server-filesystem"). The rule is
// a safety net: a URL that carries a key should say where with
// URLSecretPlaceholder.
func TokenLike(seg string) bool {
	if len(seg) < 16 {
		return false
	}
	var lower, upper, digit int
	for _, r := range seg {
		switch {
		case unicode.IsLower(r):
			lower = 1
		case unicode.IsUpper(r):
			upper = 1
		case unicode.IsDigit(r):
			digit = 1
		}
	}
	return lower+upper+digit >= 2
}

// Endpoint is the URL requests go to: URL with URLSecret in place of the
// placeholder (escaped for the path or the query, where it stands).
func (s UpstreamSpec) Endpoint() string {
	base, query, hasQuery := strings.Cut(s.URL, "?")
	base = strings.ReplaceAll(base, URLSecretPlaceholder, url.PathEscape(s.URLSecret))
	if !hasQuery {
		return base
	}
	return base + "?" + strings.ReplaceAll(query, URLSecretPlaceholder, url.QueryEscape(s.URLSecret))
}

// Secrets are the values an HTTP upstream's requests carry that ShownURL
// hides, and the bearer token: what is hidden in the error bodies the
// upstream answers with, which may echo its request.
func (s UpstreamSpec) Secrets() []string { return s.secrets(true) }

// AnswerSecrets are those of Secrets that are keys: the bearer token, the
// URL secret, key-like query names and path segments, and the values of
// key-like query parameters or named as credentials (api_key=…). A
// tool answer is data, so the query values ShownURL hides only in case
// (format=json, region=europe) are not blanked in it.
func (s UpstreamSpec) AnswerSecrets() []string { return s.secrets(false) }

func (s UpstreamSpec) secrets(everyQueryValue bool) []string {
	secrets := []string{s.BearerToken, s.URLSecret, url.PathEscape(s.URLSecret), url.QueryEscape(s.URLSecret)}
	u, err := url.Parse(s.Endpoint())
	if err != nil {
		return secrets
	}
	for k, vs := range u.Query() {
		if TokenLike(k) {
			secrets = append(secrets, k, url.QueryEscape(k))
		}
		for _, v := range vs {
			if everyQueryValue || TokenLike(k) || secretName(k) || TokenLike(v) {
				secrets = append(secrets, v, url.QueryEscape(v))
			}
		}
	}
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		if p, err := url.PathUnescape(seg); err == nil && TokenLike(p) {
			secrets = append(secrets, p, seg)
		}
	}
	return secrets
}
