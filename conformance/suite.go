package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/ansight-go/ansight/wire"
)

// DefaultTimeout bounds the wait for one response unless Options.Timeout says otherwise.
const DefaultTimeout = 10 * time.Second

// Options configures Run. The zero value runs every check with no write tools and no
// scenario.
type Options struct {
	// Timeout bounds the wait for each response and the silence between two frames of a
	// transfer (DefaultTimeout when zero).
	Timeout time.Duration
	// AllowWrite lets the suite send calls that must be refused before they run (wrong
	// arguments, schema violations, bad after blocks, unavailable tools) to write tools
	// when the app has no suitable read tool. Critical tools are never called.
	AllowWrite bool
	// Scenario holds app-specific calls that let more checks run.
	Scenario Scenario
	// Checks, when not empty, selects the checks to run: a check runs when its name equals
	// an entry or starts with an entry followed by "." ("catalog" runs every catalog.*).
	// The final.* checks, which look back over everything the run exchanged, always run.
	Checks []string
	// OnResult, when set, is called after each check with its result (progress output).
	OnResult func(Result)
}

// Scenario holds calls that only someone who knows the app can write. Each is run as
// given, whatever the tool's policy: whoever writes a scenario vouches for its calls.
type Scenario struct {
	// ReadCall is a cheap call the suite may run many times (single calls, batches of 32,
	// evidence). When nil, the suite picks the first executable read tool, by id, whose
	// arguments are all optional, and calls it with {}.
	ReadCall *wire.Call
	// ToggleAvailability changes which tools are available (signing in, loading a map…)
	// and RestoreAvailability changes it back. With them catalog.availability_toggle
	// checks that the availability revision and the changes snapshot follow.
	ToggleAvailability  []wire.Call
	RestoreAvailability []wire.Call
	// LargeResult is a read call whose result payload is at least 32 KiB of JSON, for the
	// compression checks. When nil, the app's full catalog is used if it is that large.
	LargeResult *wire.Call
	// Artifact is a call whose result announces an ASFT transfer. When nil, the suite
	// calls ui.get_screenshot with {} if the app publishes it as an executable read tool.
	Artifact *wire.Call
}

// check is one named check of the suite.
type check struct {
	name, description string
	run               func(c *cx)
}

// Checks lists the names of the suite's checks in the order Run runs them.
func Checks() []string {
	names := make([]string, len(allChecks()))
	for i, k := range allChecks() {
		names[i] = k.name
	}
	return names
}

func allChecks() []check {
	return slices.Concat(catalogChecks, envelopeChecks, callChecks, batchChecks, encodingChecks, asftChecks, toolChecks, malformedChecks, finalChecks)
}

// Run runs the suite against target and returns the report. It never fails as a whole:
// a target that stops answering fails the checks that needed it. ctx bounds the run;
// when it ends, the remaining checks are skipped.
func Run(ctx context.Context, target Target, opts Options) *Report {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	r := newRun(target, opts)
	rep := &Report{SessionID: target.SessionID(), StartedAt: time.Now().UTC()}
	start := time.Now()
	for _, k := range allChecks() {
		if !selected(opts.Checks, k.name) {
			continue
		}
		res := r.runCheck(ctx, k)
		rep.Results = append(rep.Results, res)
		if opts.OnResult != nil {
			opts.OnResult(res)
		}
	}
	rep.Duration = time.Since(start)
	return rep
}

func selected(filter []string, name string) bool {
	if len(filter) == 0 || strings.HasPrefix(name, "final.") {
		return true
	}
	for _, f := range filter {
		if name == f || strings.HasPrefix(name, f+".") {
			return true
		}
	}
	return false
}

// stop unwinds a check: it is panicked by cx.failf and cx.skipf and recovered by runCheck,
// the way testing.T.FailNow works.
type stop struct{}

// runCheck runs one check and turns its outcome into a Result.
func (r *run) runCheck(ctx context.Context, k check) (res Result) {
	res = Result{Name: k.name, Description: k.description, Status: StatusPass}
	start := time.Now()
	c := &cx{r: r, ctx: ctx, res: &res}
	defer func() {
		res.Duration = time.Since(start)
		if v := recover(); v != nil {
			if _, ok := v.(stop); !ok {
				res.Status, res.Reason = StatusFail, fmt.Sprintf("the suite panicked: %v\n%s", v, debug.Stack())
			}
		}
	}()
	if ctx.Err() != nil {
		c.skipf("the run was cancelled: %v", ctx.Err())
	}
	if r.dead != nil {
		c.skipf("the connection to the app is gone: %v", r.dead)
	}
	k.run(c)
	return res
}

// cx is a running check's handle, like testing.T.
type cx struct {
	r    *run
	ctx  context.Context
	res  *Result
	last *Exchange
}

// failf fails the check with the last exchange and stops it.
func (c *cx) failf(format string, args ...any) {
	c.res.Status, c.res.Reason = StatusFail, fmt.Sprintf(format, args...)
	if c.res.Exchange == nil {
		c.res.Exchange = c.last
	}
	panic(stop{})
}

// expectf fails the check with a statement of what the contract requires.
func (c *cx) expectf(expected string, format string, args ...any) {
	c.res.Expected = expected
	c.failf(format, args...)
}

// skipf skips the check and stops it.
func (c *cx) skipf(format string, args ...any) {
	c.res.Status, c.res.Reason = StatusSkip, fmt.Sprintf(format, args...)
	panic(stop{})
}

// notef records a tolerated variant.
func (c *cx) notef(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	if !slices.Contains(c.res.Notes, n) {
		c.res.Notes = append(c.res.Notes, n)
	}
}

// problems fails the check when list is not empty.
func (c *cx) problems(expected string, list []string) {
	if len(list) > 0 {
		c.expectf(expected, "%s", strings.Join(dedupe(list), "\n"))
	}
}

// newRequestID returns a fresh id for a request of this run.
func (r *run) newRequestID() string {
	r.seq++
	return fmt.Sprintf("%s-%03d", r.prefix, r.seq)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// errNoResponse is the cause of a request that got no answer in time.
var errNoResponse = errors.New("no response")
