package sdk

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A plugin command whose tools cannot be built says why, after its name,
// and exits 1 before serving anything. The test binary plays the command.
func TestMainRefusesABuildError(t *testing.T) {
	if os.Getenv("ORDO_SDK_MAIN_CHILD") == "1" {
		Main("ordo-plugin-x", func() ([]Tool, error) { return nil, errors.New("ORDO_X_ROOT is not set") })
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainRefusesABuildError$")
	cmd.Env = append(os.Environ(), "ORDO_SDK_MAIN_CHILD=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || stderr.String() != "ordo-plugin-x: ORDO_X_ROOT is not set\n" {
		t.Fatalf("exit %v, stderr %q", err, stderr.String())
	}
}
