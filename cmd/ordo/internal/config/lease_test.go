package config

import (
	"strings"
	"testing"
	"time"
)

// Issue 13: lease_ttl is a key with the engine's default, set by the file
// or ORDO_LEASE_TTL, and a bad value is a CodeInvalidConfig error naming it.
func TestLeaseTTL(t *testing.T) {
	home := envOf("HOME", "/home/ada")
	cfg, err := Parse(nil, "/etc/ordo", home)
	if err != nil || cfg.LeaseTTL != 30*time.Second {
		t.Fatalf("default: %v %v", cfg.LeaseTTL, err)
	}
	cfg, err = Parse([]byte("lease_ttl: 2m\n"), "/etc/ordo", home)
	if err != nil || cfg.LeaseTTL != 2*time.Minute {
		t.Fatalf("file: %v %v", cfg.LeaseTTL, err)
	}
	cfg, err = Parse([]byte("lease_ttl: 2m\n"), "/etc/ordo", envOf("HOME", "/home/ada", "ORDO_LEASE_TTL", "5s"))
	if err != nil || cfg.LeaseTTL != 5*time.Second {
		t.Fatalf("env over file: %v %v", cfg.LeaseTTL, err)
	}
	for _, tc := range []struct {
		file, env, says string
	}{
		{"lease_ttl: 0s\n", "", "at least 1s"},
		{"lease_ttl: 500ms\n", "", "at least 1s"},
		{"lease_ttl: -30s\n", "", "at least 1s"},
		{"lease_ttl: soon\n", "", "a duration"},
		{"", "soon", "a duration"},
		{"", "10ms", "at least 1s"},
	} {
		_, err := Parse([]byte(tc.file), "/etc/ordo", envOf("HOME", "/home/ada", "ORDO_LEASE_TTL", tc.env))
		if k := keyOf(t, err); k != "lease_ttl" || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%q / env %q: key %q, %v; want lease_ttl saying %q", tc.file, tc.env, k, err, tc.says)
		}
	}
}
