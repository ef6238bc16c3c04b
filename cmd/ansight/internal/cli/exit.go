package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/internal/durtext"
	"github.com/ansight-go/ansight/wire"
)

// Exit codes: scripts may rely on them. Those the official CLI shares mean the same (10, a
// test failed, is ExitTestFailed); of its others, 3 (configuration), 11 (telemetry
// finding) and 12 (artifact difference) belong to commands this CLI does not have, and are
// never used (docs/cli.md). 8 is ours: a limit the caller can raise was hit.
const (
	ExitOK              = 0   // success
	ExitFailure         = 1   // any other failure (including a tool that ran and failed)
	ExitUsage           = 2   // bad flags or arguments
	ExitHostUnavailable = 4   // no resident host to talk to (start one with `ansight host run`)
	ExitToolUnavailable = 5   // the tool is unknown, or not available in the app's current state
	ExitAccessDenied    = 6   // policy: the grant, the guard or --allow-critical forbids it
	ExitNoSession       = 7   // no such session, none connected, or it disconnected
	ExitTimeout         = 8   // the host stopped waiting for the app at the call's limit (--timeout raises it)
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
	// timeout, when set, is the call the host stopped waiting for (timeoutError).
	timeout *callTimeout
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

// callTimeout is a request the host stopped waiting for at its limit, read from the host's
// message (a tools.TimeoutError through the control API: "ui.wait did not answer within
// 20s (the host's default); raise the limit with timeoutMs (up to 1h)"), so that the CLI
// says it in its own terms: the tool, the limit, and the flag that raises it.
type callTimeout struct {
	// subject names what timed out: "ui.wait", "a batch of 2 calls (notes.list, ui.wait)".
	subject string
	// limit is the limit that was hit, basis how it was set ("the host's default").
	limit time.Duration
	basis string
	// files: the answer arrived, the files it announced did not.
	files bool
	// flag raises the limit ("--timeout"); "" for a command that has none.
	flag string
}

// parseTimeout reads a host's timeout message; ok is false for any other text.
func parseTimeout(msg string) (t *callTimeout, ok bool) {
	t = &callTimeout{}
	var rest string
	if s, r, found := strings.Cut(msg, " did not answer within "); found {
		t.subject, rest = s, r
	} else if s, r, found := strings.Cut(msg, " did not finish sending its files within "); found {
		t.subject, rest, t.files = s, r, true
	} else {
		return nil, false
	}
	word, rest, _ := strings.Cut(rest, " ")
	d, err := time.ParseDuration(word)
	if err != nil || d <= 0 || t.subject == "" {
		return nil, false
	}
	t.limit = d
	if b, _, found := strings.Cut(strings.TrimPrefix(rest, "("), ")"); found && strings.HasPrefix(rest, "(") {
		t.basis = b
	}
	return t, true
}

// suggested is the limit to try next: twice the one hit, in whole seconds, at most the
// host's maximum; 0 when the limit hit was the maximum already.
func (t *callTimeout) suggested() time.Duration {
	if t.limit >= maxTimeout {
		return 0
	}
	return min((2*t.limit + time.Second - 1).Truncate(time.Second), maxTimeout)
}

// message is the one line the CLI prints: "ui.wait timed out after 20s (the host's
// default); raise it with --timeout 40s".
func (t *callTimeout) message() string {
	var b strings.Builder
	b.WriteString(t.subject)
	if t.files {
		b.WriteString(" did not finish sending its files within ")
	} else {
		b.WriteString(" timed out after ")
	}
	b.WriteString(durtext.Format(t.limit))
	if t.basis != "" {
		b.WriteString(" (" + t.basis + ")")
	}
	switch next := t.suggested(); {
	case t.flag == "":
	case next == 0:
		b.WriteString("; that is the most " + t.flag + " allows")
	default:
		b.WriteString("; raise it with " + t.flag + " " + durtext.Format(next))
	}
	return b.String()
}

// hint is the next step after the message.
func (t *callTimeout) hint() string {
	if t.flag == "" || t.suggested() == 0 {
		return "the app is busy or stuck: check it ('ansight session logs'), then try again"
	}
	return "the app may still be running it: after a write tool, check the app's state before calling it again"
}

// timeoutError is the exit error of a call the host stopped waiting for (exit 8, code
// timeout in --json). Main names the command's flag (setFlag) once it knows the command.
func timeoutError(err error) *exitError {
	e := &exitError{code: ExitTimeout, err: err, errCode: string(wire.CodeTimeout)}
	if t, ok := parseTimeout(err.Error()); ok {
		t.flag = "--timeout"
		e.timeout = t
		e.err, e.hint = errors.New(t.message()), t.hint()
	}
	return e
}

// setTimeoutFlag rewrites a timeout's message for a command whose flag that raises the
// limit is flag ("" when it has none).
func (e *exitError) setTimeoutFlag(flag string) {
	if e.timeout == nil || e.timeout.flag == flag {
		return
	}
	e.timeout.flag = flag
	e.err, e.hint = errors.New(e.timeout.message()), e.timeout.hint()
}

// maxTimeout is the longest limit a caller may set (hostapi.MaxTimeoutMS: an hour).
const maxTimeout = hostapi.MaxTimeoutMS * time.Millisecond
