package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ordo-run/ordo/contracts"
)

// Exit codes. A script can tell how a run ended without parsing output.
const (
	ExitCompleted   = 0 // the run completed (or the command succeeded)
	ExitFailed      = 1 // the run failed, or Ordo hit an operational error
	ExitUsage       = 2 // bad flags or arguments, invalid configuration, invalid plan file
	ExitInterrupted = 3 // the run waits for a person, or Ctrl-C stopped it: resumable
	ExitRejected    = 4 // a person rejected the plan or a step
	ExitCancelled   = 5 // the run was cancelled for good
)

// exitError ends a command with a code after it has said why itself.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// usageErr marks bad command-line use; help is the command whose --help
// to point to when it is not the one that ran ('ordo help srve': ordo).
type usageErr struct {
	err  error
	help string
}

func (e *usageErr) Error() string { return e.err.Error() }
func (e *usageErr) Unwrap() error { return e.err }

func usageError(err error) error { return &usageErr{err: err} }

// exitCode maps a command's error to the process exit code.
func exitCode(err error) int {
	var ex *exitError
	var ue *usageErr
	switch {
	case err == nil:
		return ExitCompleted
	case errors.As(err, &ex):
		return ex.code
	case errors.As(err, &ue):
		return ExitUsage
	case contracts.CodeOf(err)/1000 == 1: // validation: nothing was changed
		return ExitUsage
	}
	return ExitFailed
}

// statusExit is the exit code for a run that ended (or paused) in status.
func statusExit(s contracts.RunStatus) int {
	switch s {
	case contracts.RunCompleted:
		return ExitCompleted
	case contracts.RunInterrupted, contracts.RunReady, contracts.RunRunning, contracts.RunPending:
		return ExitInterrupted
	case contracts.RunRejected:
		return ExitRejected
	case contracts.RunCancelled:
		return ExitCancelled
	}
	return ExitFailed
}

// args checks the number of positional arguments, as a usage error.
func args(min, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if len(a) < min || (max >= 0 && len(a) > max) {
			want := fmt.Sprintf("%d", min)
			switch {
			case max < 0:
				want = fmt.Sprintf("at least %d", min)
			case max != min:
				want = fmt.Sprintf("%d to %d", min, max)
			}
			return usageError(fmt.Errorf("%s takes %s argument(s), got %d (usage: %s)", cmd.CommandPath(), want, len(a), cmd.UseLine()))
		}
		return nil
	}
}
