package tools

import (
	"context"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/internal/durtext"
	"github.com/ansight-go/ansight/wire"
)

// The call deadline model (docs/protocol/calls.md#how-long-the-host-waits).
//
// How long the host waits for a call is derived from what the call asks for, so that a
// long tool just works without the caller guessing a timeout:
//
//   - a ui.wait waits its timeoutMilliseconds (clamped to 1..60000 as the SDKs do);
//   - a tool that declares "hint:duration=<seconds>" in its catalog keywords takes that long;
//   - evidence asked for with after waits its delayMilliseconds first;
//   - a batch runs its calls one after the other: their asks add up;
//   - the files an answer announces get their size at MinTransferRate, on top.
//
// The limit is what the call asks for plus DeadlineMargin, never less than the host's
// default (Options.Timeout, 20 s) and never more than MaxDerivedTimeout. A caller that
// knows better gives its own limit (WithTimeout, or a context deadline): it overrides the
// derived one, shorter or longer, up to MaxTimeout, and covers the answer and its
// transfers alike. When the limit is hit, the call fails with a *TimeoutError (inside a
// *TransportError) naming the tool, the limit and what it was derived from.

const (
	// DeadlineMargin is added to what a call asks for: the app's dispatch, evidence capture
	// and the wire, on a busy device.
	DeadlineMargin = 5 * time.Second
	// MaxDerivedTimeout bounds a limit derived from what a call or its tool asks for: an app
	// cannot make the host wait longer by declaring so. A caller's own limit may be longer.
	MaxDerivedTimeout = 10 * time.Minute
	// MaxTimeout bounds a caller's limit (WithTimeout): one hour.
	MaxTimeout = time.Hour
	// MinTransferRate is the slowest transfer rate a derived limit allows for, in bytes per
	// second (a phone on poor Wi-Fi): once an answer has announced files of n bytes in all,
	// they have n/MinTransferRate plus Options.Timeout to arrive, up to MaxTimeout (the
	// stall watchdog, Options.Timeout without a frame, applies besides).
	MinTransferRate = 256 << 10
	// waitToolID is the standard UI tool whose arguments say how long it runs.
	waitToolID = "ui.wait"
	// maxWaitMilliseconds is ui.wait's clamp (docs/protocol/ui-tools.md).
	maxWaitMilliseconds = 60_000
)

// Basis says where a limit came from.
type Basis uint8

// Bases of a Limit.
const (
	// BasisDefault: the host's default, Options.Timeout: the call asked for nothing longer.
	BasisDefault Basis = iota
	// BasisDerived: derived from what the call asks for (see Limit.Reason).
	BasisDerived
	// BasisCaller: the caller's own limit (WithTimeout or a context deadline).
	BasisCaller
)

// Limit is how long the host waits for a request, and why.
type Limit struct {
	// Timeout is the whole wait: for a call, its answer and the transfers it announces.
	Timeout time.Duration
	// Basis says where Timeout came from.
	Basis Basis
	// Reason says what a derived limit was derived from, like "ui.wait's
	// timeoutMilliseconds of 30s plus 5s"; empty for the other bases.
	Reason string
}

// String describes the limit: "35s (ui.wait's timeoutMilliseconds of 30s plus 5s)".
func (l Limit) String() string {
	switch l.Basis {
	case BasisCaller:
		return FormatDuration(l.Timeout) + " (the caller's limit)"
	case BasisDerived:
		return FormatDuration(l.Timeout) + " (" + l.Reason + ")"
	}
	return FormatDuration(l.Timeout) + " (the host's default)"
}

// FormatDuration writes d the way people read it: 25s, 1.5s, 250ms, 10m, 1h30m.
func FormatDuration(d time.Duration) string { return durtext.Format(d) }

// timeoutKey is the context key of WithTimeout.
type timeoutKey struct{}

// WithTimeout returns a context whose calls, batches and queries wait d for their answer
// and its transfers, instead of the limit the client derives: the caller's timeout
// overrides. d is bounded by MaxTimeout; d <= 0 leaves ctx as it is. The returned cancel
// releases the context's timer.
func WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	d = min(d, MaxTimeout)
	ctx, cancel := context.WithTimeout(ctx, d)
	return context.WithValue(ctx, timeoutKey{}, d), cancel
}

// callerLimit returns the caller's limit in ctx: WithTimeout's, else what is left of a
// context deadline.
func callerLimit(ctx context.Context) (Limit, bool) {
	if d, ok := ctx.Value(timeoutKey{}).(time.Duration); ok {
		return Limit{Timeout: d, Basis: BasisCaller}, true
	}
	if dl, ok := ctx.Deadline(); ok {
		return Limit{Timeout: max(time.Until(dl), 0).Round(time.Millisecond), Basis: BasisCaller}, true
	}
	return Limit{}, false
}

// CallLimit returns the limit Call would give call made with ctx, from the last catalog
// (a tool's hint:duration is read from it; without a catalog it is not known yet).
func (c *Client) CallLimit(ctx context.Context, call wire.Call) Limit {
	return c.limitFor(ctx, c.catalogs.load(), []wire.Call{call})
}

// BatchLimit returns the limit Batch would give calls made with ctx (see CallLimit).
func (c *Client) BatchLimit(ctx context.Context, calls []wire.Call) Limit {
	return c.limitFor(ctx, c.catalogs.load(), calls)
}

// defaultLimit is the limit of a request that asks for nothing: a query, a cheap call.
func (c *Client) defaultLimit(ctx context.Context) Limit {
	if l, ok := callerLimit(ctx); ok {
		return l
	}
	return Limit{Timeout: c.opts.Timeout}
}

// limitFor derives the limit of calls (one call, or a batch) made with ctx, reading tools'
// hints in st (which may be nil).
func (c *Client) limitFor(ctx context.Context, st *catalogState, calls []wire.Call) Limit {
	if l, ok := callerLimit(ctx); ok {
		return l
	}
	var ask time.Duration
	reason := ""
	for i := range calls {
		a, why := callAsk(st, &calls[i])
		if a <= 0 {
			continue
		}
		ask += a
		if reason == "" {
			reason = why
		} else {
			reason += " and " + why
		}
	}
	wait := min(ask+DeadlineMargin, MaxDerivedTimeout)
	if ask <= 0 || wait <= c.opts.Timeout {
		return Limit{Timeout: c.opts.Timeout}
	}
	if wait == MaxDerivedTimeout {
		return Limit{Timeout: wait, Basis: BasisDerived, Reason: reason + ", at most " + FormatDuration(MaxDerivedTimeout)}
	}
	return Limit{Timeout: wait, Basis: BasisDerived, Reason: reason + " plus " + FormatDuration(DeadlineMargin)}
}

// callAsk is how long one call says it runs: ui.wait's timeoutMilliseconds or its tool's
// hint:duration, whichever is longer, plus the delay of the evidence it asks for.
func callAsk(st *catalogState, call *wire.Call) (time.Duration, string) {
	var ask time.Duration
	why := ""
	if call.ToolID == waitToolID {
		if ms, ok := waitMilliseconds(call.Arguments); ok {
			ask, why = time.Duration(ms)*time.Millisecond, "ui.wait's timeoutMilliseconds of "+FormatDuration(time.Duration(ms)*time.Millisecond)
		}
	}
	if st != nil {
		if d, ok := st.hint(call.ToolID); ok && d > ask {
			ask, why = d, call.ToolID+"'s hint:duration of "+FormatDuration(d)
		}
	}
	if a := call.After; a != nil && a.DelayMilliseconds > 0 {
		d := time.Duration(min(a.DelayMilliseconds, wire.MaxAfterDelayMilliseconds)) * time.Millisecond
		ask += d
		if why == "" {
			why = "the evidence delay of " + FormatDuration(d)
		} else {
			why += " and its evidence delay of " + FormatDuration(d)
		}
	}
	return ask, why
}

// waitMilliseconds reads a ui.wait's timeoutMilliseconds from its arguments, clamped as
// the SDKs clamp it. Absent, null or not a number: the SDK's default (5 s), under the
// host's default, so nothing to derive.
func waitMilliseconds(args jsontext.Value) (int64, bool) {
	if len(args) == 0 || args.Kind() != '{' {
		return 0, false
	}
	dec := jsontext.NewDecoder(strings.NewReader(string(args)))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return 0, false
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return 0, false
		}
		if name.String() != "timeoutMilliseconds" {
			if dec.SkipValue() != nil {
				return 0, false
			}
			continue
		}
		v, err := dec.ReadToken()
		if err != nil || v.Kind() != '0' {
			return 0, false
		}
		f, err := v.Float()
		if err != nil || math.IsNaN(f) {
			return 0, false
		}
		return int64(min(max(f, 1), maxWaitMilliseconds)), true
	}
	return 0, false
}

// transferAllowance is how long a derived limit gives the transfers an answer announced:
// their sizes at MinTransferRate, plus the host's default wait, within MaxTimeout. An app
// cannot stretch it without sending the bytes (a transfer that sends more than it
// announced fails).
func (c *Client) transferAllowance(ts []*transfer) time.Duration {
	var size int64
	for _, t := range ts {
		size += max(t.size, 0)
	}
	seconds := float64(size) / MinTransferRate
	return min(time.Duration(seconds*float64(time.Second))+c.opts.Timeout, MaxTimeout)
}

// FormatRate writes a rate in bytes per second: "2 MiB/s".
func FormatRate(bytesPerSecond int64) string {
	switch {
	case bytesPerSecond >= 1<<20 && bytesPerSecond%(1<<20) == 0:
		return strconv.FormatInt(bytesPerSecond>>20, 10) + " MiB/s"
	case bytesPerSecond >= 1<<10 && bytesPerSecond%(1<<10) == 0:
		return strconv.FormatInt(bytesPerSecond>>10, 10) + " KiB/s"
	}
	return strconv.FormatInt(bytesPerSecond, 10) + " B/s"
}

// TimeoutError says that the host stopped waiting for a request at its limit. It matches
// ErrTimeout (errors.Is) and has the code wire.CodeTimeout (wire.CodeOf).
type TimeoutError struct {
	// Op is the request type: tool.query, tool.call or tool.batch.
	Op string
	// Subject names what timed out: the tool id of a call, "a batch of 3 calls (ui.wait,
	// notes.list, …)", "a catalog query".
	Subject string
	// Limit is the limit that was hit.
	Limit Limit
	// Transfer is true when the answer had arrived and a file it announced had not.
	Transfer bool
}

// Error names the request, the limit and how it was set, and how to raise it (with the
// host API's and the MCP bridge's TimeoutOption; see RaiseAdvice).
func (e *TimeoutError) Error() string {
	what := "did not answer"
	if e.Transfer {
		what = "did not finish sending its files"
	}
	return e.Subject + " " + what + " within " + e.Limit.String() + "; " + RaiseAdvice(TimeoutOption)
}

// TimeoutOption is the name of the request member that sets a call's limit in the host
// API and the MCP bridge; a TimeoutError's message ends with its RaiseAdvice.
const TimeoutOption = "timeoutMs"

// RaiseAdvice is the end of a TimeoutError's message, for the option that sets the limit:
// a surface with an option of its own (ansight's --timeout) replaces TimeoutOption's
// advice with its own.
func RaiseAdvice(option string) string {
	return "raise the limit with " + option + " (up to " + FormatDuration(MaxTimeout) + ")"
}

// Is makes a TimeoutError match ErrTimeout.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// ErrorCode returns wire.CodeTimeout, for wire.CodeOf.
func (e *TimeoutError) ErrorCode() wire.Code { return wire.CodeTimeout }

// querySubject names a tool.query in its errors.
const querySubject = "a catalog query"

// subjectOf names what a call or batch is about, for its errors: a call's tool, a batch's
// tools.
func subjectOf(op string, calls []wire.Call) string {
	if op == wire.TypeCall && len(calls) == 1 {
		return calls[0].ToolID
	}
	const shown = 3
	ids := make([]string, 0, shown+1)
	for i, call := range calls {
		if i == shown {
			ids = append(ids, "…")
			break
		}
		ids = append(ids, call.ToolID)
	}
	return "a batch of " + strconv.Itoa(len(calls)) + " calls (" + strings.Join(ids, ", ") + ")"
}
