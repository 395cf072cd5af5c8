package plugenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

func TestDataDirPrecedence(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("HOME", filepath.Join(tmp, "home"))
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv(DataDirEnv, "")
	for _, tc := range []struct{ env, xdg, want string }{
		{"", "", filepath.Join(tmp, "home", ".local", "share", "ordo", "plugins", "notes")},
		{"", filepath.Join(tmp, "xdg"), filepath.Join(tmp, "xdg", "ordo", "plugins", "notes")},
		{filepath.Join(tmp, "host-given"), filepath.Join(tmp, "xdg"), filepath.Join(tmp, "host-given")},
	} {
		t.Setenv(DataDirEnv, tc.env)
		t.Setenv("XDG_DATA_HOME", tc.xdg)
		got, err := DataDir("notes")
		if err != nil || got != tc.want {
			t.Fatalf("DataDir = %q, %v; want %q", got, err, tc.want)
		}
		if info, err := os.Stat(got); err != nil || !info.IsDir() {
			t.Fatalf("%q not created: %v", got, err)
		}
	}
}

func TestDirOr(t *testing.T) {
	tmp := t.TempDir()
	def := filepath.Join(tmp, "default", "root")
	t.Setenv("ORDO_TEST_ROOT", "")
	if got, err := DirOr("ORDO_TEST_ROOT", def); err != nil || got != def {
		t.Fatalf("DirOr = %q, %v", got, err)
	}
	if _, err := os.Stat(def); err != nil {
		t.Fatalf("default not created: %v", err)
	}
	set := filepath.Join(tmp, "typo")
	t.Setenv("ORDO_TEST_ROOT", set)
	if got, err := DirOr("ORDO_TEST_ROOT", def); err != nil || got != set {
		t.Fatalf("DirOr = %q, %v", got, err)
	}
	if _, err := os.Stat(set); err == nil {
		t.Fatal("DirOr created a directory named by the environment")
	}
}

func TestBytesAndBool(t *testing.T) {
	for v, want := range map[string]int64{"": 5, "0": 0, "1048576": 1 << 20} {
		t.Setenv("ORDO_TEST_MAX", v)
		if got, err := Bytes("ORDO_TEST_MAX", 5); err != nil || got != want {
			t.Errorf("Bytes(%q) = %d, %v; want %d", v, got, err, want)
		}
	}
	for _, v := range []string{"-1", "1 MiB", "1e6", "x"} {
		t.Setenv("ORDO_TEST_MAX", v)
		if _, err := Bytes("ORDO_TEST_MAX", 5); contracts.AsError(err).Code != contracts.CodeInvalidConfig || contracts.AsError(err).Details["setting"] != "ORDO_TEST_MAX" {
			t.Errorf("Bytes(%q) = %v, want invalid config naming the setting", v, err)
		}
	}
	for v, want := range map[string]bool{"": false, "true": true, "1": true, "false": false} {
		t.Setenv("ORDO_TEST_FLAG", v)
		if got, err := Bool("ORDO_TEST_FLAG"); err != nil || got != want {
			t.Errorf("Bool(%q) = %v, %v", v, got, err)
		}
	}
	t.Setenv("ORDO_TEST_FLAG", "yes please")
	if _, err := Bool("ORDO_TEST_FLAG"); contracts.AsError(err).Code != contracts.CodeInvalidConfig {
		t.Errorf("Bool(yes please) = %v", err)
	}
}
