package testbuild

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Bundled are the plugins ordo starts from its own directory.
var Bundled = []string{"chat", "files", "notes", "sheets", "text"}

// Root is the module's root directory (go env GOMOD from the test's
// package directory), where Build resolves "./..." packages.
func Root() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == "/dev/null" {
		return "", fmt.Errorf("not inside the ordo module")
	}
	return filepath.Dir(mod), nil
}

// Build runs go build -o out pkgs in the module root; an out ending in "/"
// is a directory that gets one binary per package.
func Build(out string, pkgs ...string) error {
	root, err := Root()
	if err != nil {
		return err
	}
	build := exec.Command("go", append([]string{"build", "-o", out}, pkgs...)...)
	build.Dir = root
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", strings.Join(pkgs, " "), err, b)
	}
	return nil
}

// Ordo builds ordo and the bundled plugins into dir.
func Ordo(dir string) error {
	pkgs := []string{"./cmd/ordo"}
	for _, p := range Bundled {
		pkgs = append(pkgs, "./cmd/ordo-plugin-"+p)
	}
	return Build(dir+string(filepath.Separator), pkgs...)
}

// Main is TestMain's body for a suite that runs ordo: it builds ordo and
// the bundled plugins into bin, a directory in a new temporary directory
// tmp (named from prefix), calls setup with the module root, tmp and bin
// (for the suite's own builds and paths), runs the tests and removes tmp.
// It returns the exit code, 1 when anything before the tests fails.
func Main(m *testing.M, prefix string, setup func(root, tmp, bin string) error) int {
	root, err := Root()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tmp, err := os.MkdirTemp("", prefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "bin")
	if err = Ordo(bin); err == nil {
		err = setup(root, tmp, bin)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
