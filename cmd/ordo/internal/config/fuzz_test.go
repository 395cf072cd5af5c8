package config

import (
	"errors"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// FuzzParse: any input either parses into a configuration that validates,
// or is refused with a CodeInvalidConfig error naming a key. Seeds are in
// testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add([]byte("parallelism: 2\nllm:\n  timeout: 5s\n"))
	env := envOf("HOME", "/home/fuzz")
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, "/etc/ordo", env)
		if err != nil {
			var ce *contracts.Error
			if !errors.As(err, &ce) || ce.Code != contracts.CodeInvalidConfig {
				t.Fatalf("uncoded error: %v", err)
			}
			if k, _ := ce.Details["key"].(string); k == "" {
				t.Fatalf("error names no key: %v", err)
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("parsed config does not validate: %v", err)
		}
	})
}
