package mcpserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ordo-run/ordo/contracts"
)

// RoleAdmin is the role the admin tools require.
const RoleAdmin = "admin"

// Identity is who is calling: the user runs are recorded under and the
// roles that gate tools.
type Identity struct {
	User  string   `json:"user"`
	Roles []string `json:"roles,omitempty"`
}

// Has reports whether the identity holds role.
func (i Identity) Has(role string) bool { return slices.Contains(i.Roles, role) }

// Token maps one bearer token to an identity.
type Token struct {
	Token string
	Identity
}

type identityKey struct{}

func withIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// identityFrom returns the caller's identity; a context without one (which
// the transports never produce) is an anonymous caller with no roles.
func identityFrom(ctx context.Context) Identity {
	id, _ := ctx.Value(identityKey{}).(Identity)
	return id
}

// MinTokenLength is the shortest token ParseTokens accepts: shorter ones
// are guessable.
const MinTokenLength = 16

// ParseTokens reads tokens in the form `ordo serve` reads from the
// ORDO_HTTP_TOKENS environment variable: entries separated by ';' or
// newlines, each "user:role1,role2:token". The token is everything after
// the second colon, so it may itself contain colons; roles may be empty.
// A token shorter than MinTokenLength, or repeated, is refused.
func ParseTokens(spec string) ([]Token, error) {
	var out []Token
	seen := map[string]bool{}
	for i, entry := range strings.FieldsFunc(spec, func(r rune) bool { return r == ';' || r == '\n' || r == '\r' }) {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		user, rest, ok := strings.Cut(entry, ":")
		roles, token, ok2 := strings.Cut(rest, ":")
		user = strings.TrimSpace(user)
		if !ok || !ok2 || user == "" || token == "" {
			return nil, contracts.Errorf(contracts.CodeInvalidConfig,
				"token entry %d: want user:roles:token", i+1).With("field", "tokens").With("entry", i+1)
		}
		if utf8.RuneCountInString(token) < MinTokenLength {
			return nil, contracts.Errorf(contracts.CodeInvalidConfig,
				"token entry %d (user %q): want a token of at least %d characters", i+1, user, MinTokenLength).With("field", "tokens").With("entry", i+1)
		}
		if seen[token] {
			return nil, contracts.Errorf(contracts.CodeInvalidConfig,
				"token entry %d (user %q) repeats an earlier token", i+1, user).With("field", "tokens").With("entry", i+1)
		}
		seen[token] = true
		t := Token{Token: token, Identity: Identity{User: user}}
		for r := range strings.SplitSeq(roles, ",") {
			if r = strings.TrimSpace(r); r != "" {
				t.Roles = append(t.Roles, r)
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// tokenTable checks presented tokens in constant time with respect to
// their content: every configured token is compared (as a SHA-256 digest,
// which also hides lengths) whether or not an earlier one matched.
type tokenTable struct {
	digests [][sha256.Size]byte
	ids     []Identity
}

func newTokenTable(tokens []Token) *tokenTable {
	t := &tokenTable{}
	for _, tok := range tokens {
		t.digests = append(t.digests, sha256.Sum256([]byte(tok.Token)))
		t.ids = append(t.ids, tok.Identity)
	}
	return t
}

func (t *tokenTable) lookup(presented string) (Identity, bool) {
	d := sha256.Sum256([]byte(presented))
	found := -1
	for i := range t.digests {
		if subtle.ConstantTimeCompare(d[:], t.digests[i][:]) == 1 {
			found = i
		}
	}
	if found < 0 || presented == "" {
		return Identity{}, false
	}
	return t.ids[found], true
}
