package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/ansight-go/ansight/wire"
)

// Exit codes: scripts may rely on them. Those the official CLI shares mean the same (10, a
// test failed, is ExitTestFailed); of its others, 3 (configuration), 11 (telemetry
// finding) and 12 (artifact difference) belong to commands this CLI does not have, and are
// never used (docs/cli.md).
const (
	ExitOK              = 0   // success
	ExitFailure         = 1   // any other failure (including a tool that ran and failed)
	ExitUsage           = 2   // bad flags or arguments
	ExitHostUnavailable = 4   // no resident host to talk to (start one with `ansight host run`)
	ExitToolUnavailable = 5   // the tool is unknown, or not available in the app's current state
	ExitAccessDenied    = 6   // policy: the grant, the guard or --allow-critical forbids it
	ExitNoSession       = 7   // no such session, none connected, or it disconnected
	ExitInterrupted     = 130 // interrupted (Ctrl-C)
)

// exitError carries an exit code and a message meant for the user.
type exitError struct {
	code int
	err  error
	// hint is an optional next step printed after the message.
	hint string
	// errCode, when set, is the error's code in the --json output (error.code): the
	// official words for it, where the official CLI has some ("PasswordRequired").
	errCode string
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErrorf reports a usage mistake (exit 2).
func usageErrorf(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// exitCodeOfKind is the exit code of a failed tool call of kind k: the CLI's one mapping
// from the error vocabulary (wire.Kind).
func exitCodeOfKind(k wire.Kind) int {
	switch k {
	case wire.KindDenied:
		return ExitAccessDenied
	case wire.KindUnavailable:
		return ExitToolUnavailable
	}
	return ExitFailure
}

// exitCodeOf maps an error to the process exit code.
func exitCodeOf(ctx context.Context, err error) int {
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return ExitInterrupted
	}
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	return ExitFailure
}
