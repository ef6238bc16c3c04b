package flow

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// Options are a run's inputs besides the flow and its target. The zero value runs with no
// --var values, the process's environment and no progress.
type Options struct {
	// Vars are the --var values; they win over a flow's vars: defaults.
	Vars map[string]string
	// Env looks up ${env.NAME}; os.LookupEnv when nil.
	Env func(string) (string, bool)
	// Progress is told when each step starts (Step.Status empty) and ends. It runs on the
	// runner's goroutine and must return quickly.
	Progress func(Event)
	// SessionID, AppID and Host name the target in the result.
	SessionID, AppID, Host string
}

// Event is a step starting or ending.
type Event struct {
	Result *Result
	Step   *StepResult
}

// evidenceTimeout bounds the screenshot and tree taken when a step fails.
const evidenceTimeout = 5 * time.Second

// Run runs f against t: setup and steps in order within f.Timeout until one fails (the
// rest are skipped), then the teardown, always, within f.TeardownTimeout. It returns when
// the timeouts say, even if t does not return (a call t never answers is abandoned at
// its step's deadline).
func Run(ctx context.Context, f *Flow, t Target, opts Options) *Result {
	r := &Result{Name: f.Name, File: f.File, SessionID: opts.SessionID, AppID: opts.AppID, Host: opts.Host,
		StartedAt: time.Now(), Status: StatusPassed}
	if r.Name == "" {
		r.Name = defaultName(f.File)
	}
	env := opts.Env
	if env == nil {
		env = os.LookupEnv
	}
	x := &runner{t: t, opts: opts, res: r, sc: &scope{saved: map[string]*value{}, env: env}}
	if err := f.Check(opts.Vars, env); err != nil {
		errs := Errors(err)
		r.Status = StatusError
		r.Failure = &Failure{Step: errs[0].Step, Pos: errs[0].Pos, Message: err.Error()}
		r.DurationMS = time.Since(r.StartedAt).Milliseconds()
		return r
	}
	x.flow(ctx, f, "", nil)
	r.DurationMS = time.Since(r.StartedAt).Milliseconds()
	return r
}

// defaultName is a flow's name when it gives none: its file's name without the extension.
func defaultName(file string) string {
	base := file[strings.LastIndexAny(file, `/\`)+1:]
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	return base
}

type runner struct {
	t    Target
	opts Options
	res  *Result
	sc   *scope
}

// flow runs one flow's phases (the outer one, or an include's in its place, within its
// includer's timeout); prefix labels an include's steps. It reports whether every step passed.
func (x *runner) flow(ctx context.Context, f *Flow, prefix string, outer map[string]string) bool {
	saved := x.sc.vars
	x.sc.vars = mergeVars(f.Vars, outer, x.opts.Vars)
	defer func() { x.sc.vars = saved }()
	vars := x.sc.vars

	var main context.Context
	var cancel context.CancelFunc
	if prefix == "" {
		main, cancel = context.WithTimeout(ctx, f.Timeout)
	} else {
		main, cancel = context.WithCancel(ctx)
	}
	failed := false
	for _, phase := range []struct {
		name  string
		steps []*Step
	}{{"setup", f.Setup}, {"steps", f.Steps}} {
		for i, s := range phase.steps {
			if failed {
				x.skip(phase.name, i, s, prefix)
				continue
			}
			if !x.step(main, phase.name, i, s, prefix, vars, f.Timeout) {
				failed = true
			}
		}
	}
	cancel()
	// The teardown runs however the steps ended, with a deadline of its own: cancelling
	// the run (Ctrl-C) or its timeout does not skip it.
	td, cancelTD := context.WithTimeout(context.WithoutCancel(ctx), f.TeardownTimeout)
	defer cancelTD()
	for i, s := range f.Teardown {
		if !x.step(td, "teardown", i, s, prefix, vars, f.TeardownTimeout) {
			failed = true
		}
	}
	return !failed
}

func (x *runner) skip(phase string, i int, s *Step, prefix string) {
	if s.Included != nil {
		for _, p := range []struct {
			name  string
			steps []*Step
		}{{"setup", s.Included.Setup}, {"steps", s.Included.Steps}, {"teardown", s.Included.Teardown}} {
			for j, sub := range p.steps {
				x.skip(p.name, j, sub, prefix+s.Label()+" › ")
			}
		}
		return
	}
	x.res.Steps = append(x.res.Steps, &StepResult{Phase: phase, Index: i, Kind: s.Kind, Label: prefix + s.Label(), Pos: s.Pos, Status: StatusSkipped})
}

// step runs one step (an include: its flow in place) and reports whether it passed.
func (x *runner) step(ctx context.Context, phase string, i int, s *Step, prefix string, vars map[string]string, budget time.Duration) bool {
	if s.Included != nil {
		return x.flow(ctx, s.Included, prefix+s.Label()+" › ", vars)
	}
	sr := &StepResult{Phase: phase, Index: i, Kind: s.Kind, Label: prefix + s.Label(), Pos: s.Pos, started: time.Now()}
	x.res.Steps = append(x.res.Steps, sr)
	x.progress(sr)
	status, fail := x.attempts(ctx, s, sr, budget)
	sr.Status = status
	sr.DurationMS = time.Since(sr.started).Milliseconds()
	if fail != nil {
		fail.Step = fmt.Sprintf("%s[%d] %s", phase, i, sr.Label)
		fail.Pos = s.Pos
		fail.Message = fail.Step + " (" + s.Pos.String() + "): " + fail.Message
		sr.Failure = fail
		x.evidence(ctx, sr)
		if x.res.Status == StatusPassed {
			x.res.Status = status
			x.res.Failure = fail
		}
	}
	x.progress(sr)
	return status == StatusPassed
}

func (x *runner) progress(sr *StepResult) {
	if x.opts.Progress != nil {
		x.opts.Progress(Event{Result: x.res, Step: sr})
	}
}

// attempts runs a step up to its Attempts times, until it passes.
func (x *runner) attempts(ctx context.Context, s *Step, sr *StepResult, budget time.Duration) (Status, *Failure) {
	for n := 1; ; n++ {
		sr.Attempts = n
		status, fail := x.attempt(ctx, s, sr, budget)
		if status == StatusPassed || status == StatusError || n >= s.Attempts || ctx.Err() != nil {
			if fail != nil && n > 1 {
				fail.Message += fmt.Sprintf(" (after %d attempts)", n)
			}
			return status, fail
		}
		select {
		case <-time.After(s.RetryDelay):
		case <-ctx.Done():
			return status, fail
		}
	}
}

// outcome is what a step's action came to: a result, or the error it failed with, as one
// document its expectations read.
type outcome struct {
	ok  bool
	doc *value
	// code, kind and msg describe the failure.
	code, kind, msg string
}

// hostError is a failure of the host or the session, not of the step's tool.
type hostError struct{ err error }

func (e *hostError) Error() string { return e.err.Error() }

// attempt runs the step once within its timeout and checks what it expects.
func (x *runner) attempt(ctx context.Context, s *Step, sr *StepResult, budget time.Duration) (Status, *Failure) {
	timeout := s.Timeout
	if timeout == 0 {
		timeout = DefaultStepTimeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := within(actx, func(c context.Context) (*outcome, error) { return x.do(c, s, sr, timeout) })
	if err != nil {
		var fe *Error
		switch {
		case errors.As(err, &fe):
			return StatusError, &Failure{Message: fe.Msg}
		case ctx.Err() != nil:
			return StatusFailed, &Failure{Expectation: "to finish within the flow's timeout", Actual: "still running", Message: fmt.Sprintf("the flow's timeout (%v) ran out during this step", budget)}
		case actx.Err() != nil:
			return StatusFailed, &Failure{Expectation: fmt.Sprintf("to finish within %v", timeout), Actual: "still running", Message: fmt.Sprintf("the step did not finish within its timeout (%v)", timeout)}
		}
		var he *hostError
		if errors.As(err, &he) {
			return StatusError, &Failure{Actual: he.Error(), Message: he.Error()}
		}
		return StatusFailed, &Failure{Actual: err.Error(), Message: err.Error()}
	}
	if out.doc != nil {
		sr.Output = capOutput(out.doc.json())
	}
	return x.judge(s, out)
}

// within runs fn and returns its answer, or ctx's error when ctx ends first; fn then goes
// on alone until it returns (a Target must return when its context ends).
func within[T any](ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
	type answer struct {
		v   T
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		v, err := fn(ctx)
		ch <- answer{v, err}
	}()
	select {
	case a := <-ch:
		if a.err != nil && ctx.Err() != nil {
			return a.v, ctx.Err()
		}
		return a.v, a.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

func capOutput(v jsontext.Value) jsontext.Value {
	if len(v) <= maxOutput {
		return v
	}
	b, _ := jsontext.AppendQuote(nil, shorten(string(v), maxOutput))
	return b
}

// judge checks the outcome against the step's expectError and expect, and saves it.
func (x *runner) judge(s *Step, out *outcome) (Status, *Failure) {
	if e := s.expectErr; e != nil {
		switch {
		case out.ok:
			return StatusFailed, &Failure{Expectation: e.String(), Actual: "success: " + out.doc.short(200),
				Message: fmt.Sprintf("expected %s, but it succeeded", e)}
		case e.code != "" && e.code != out.code, e.kind != "" && e.kind != out.kind:
			actual := fmt.Sprintf("%s (%s): %s", out.code, out.kind, out.msg)
			return StatusFailed, &Failure{Expectation: e.String(), Actual: actual, Message: fmt.Sprintf("expected %s, got %s", e, actual)}
		}
	} else if !out.ok {
		actual := out.msg
		if out.code != "" {
			actual = out.code + ": " + out.msg
		}
		return StatusFailed, &Failure{Expectation: "success", Actual: actual, Message: "failed: " + actual}
	}
	for _, e := range s.expects {
		actual, err := e.check(out.doc, x.sc)
		if err != nil {
			return StatusError, &Failure{Expectation: e.String(), Message: err.Error()}
		}
		if actual != "" {
			return StatusFailed, &Failure{Expectation: e.String(), Actual: actual,
				Message: fmt.Sprintf("expected %s (%s), got %s", e, e.pos, actual)}
		}
	}
	if s.Save != "" {
		x.sc.saved[s.Save] = out.doc
	}
	return StatusPassed, nil
}

// do performs the step's action.
func (x *runner) do(ctx context.Context, s *Step, sr *StepResult, timeout time.Duration) (*outcome, error) {
	switch s.Kind {
	case KindCall:
		args, err := x.args(s.args)
		if err != nil {
			return nil, err
		}
		c, err := x.t.Call(ctx, hostapi.CallRequest{ToolID: s.Tool, Arguments: args, TimeoutMS: timeout.Milliseconds()})
		if err != nil {
			return nil, &hostError{err}
		}
		if !c.Success || c.Result == nil {
			return toolFailure(c.Error, "the call failed")
		}
		return resultOutcome(c.Result.Result)
	case KindBatch:
		req := hostapi.BatchRequest{ContinueOnError: s.continueOnError, TimeoutMS: timeout.Milliseconds()}
		for _, bc := range s.calls {
			args, err := x.args(bc.args)
			if err != nil {
				return nil, err
			}
			req.Calls = append(req.Calls, hostapi.CallRequest{ToolID: bc.tool, Arguments: args, CallID: bc.callID})
		}
		b, err := x.t.Batch(ctx, req)
		if err != nil {
			return nil, &hostError{err}
		}
		if b.Result == nil {
			return toolFailure(b.Error, "the batch was refused")
		}
		raw, err := json.Marshal(b.Result)
		if err != nil {
			return nil, err
		}
		if !b.Success {
			for _, item := range b.Result.Results {
				if !item.Success && item.Error != nil {
					out, err := toolFailure(&hostapi.ToolError{Error: *item.Error, Kind: item.Error.Kind()}, "")
					if out != nil {
						out.msg = fmt.Sprintf("call %d (%s): %s", item.Index, item.ToolID, out.msg)
					}
					return out, err
				}
			}
			return &outcome{code: "batch_failed", kind: "failed", msg: "the batch did not succeed", doc: mustParse(raw)}, nil
		}
		return resultOutcome(raw)
	case KindScreenshot:
		png, err := x.t.Screenshot(ctx)
		if err != nil {
			return &outcome{code: string(wire.CodeOf(err)), kind: "failed", msg: err.Error()}, nil
		}
		sr.Screenshot = &Screenshot{Name: s.shot, Bytes: len(png), PNG: png}
		return &outcome{ok: true}, nil
	}
	op, err := x.uiOp(s)
	if err != nil {
		return nil, err
	}
	u, err := x.t.UI(ctx, op)
	if err != nil {
		return nil, &hostError{err}
	}
	if !u.Succeeded {
		e := u.Error
		if e == nil {
			e = &wire.Error{Code: "ui_failed", Message: u.Message}
		}
		out, err := toolFailure(&hostapi.ToolError{Error: *e, Kind: e.Kind()}, "")
		if out != nil && u.Message != "" {
			out.msg = u.Message
		}
		if out != nil && len(u.Result) > 0 {
			out.doc = mustParse(u.Result)
		}
		return out, err
	}
	return resultOutcome(u.Result)
}

func (x *runner) args(v *value) (jsontext.Value, error) {
	if v == nil {
		return nil, nil
	}
	a, err := x.sc.expandValue(v)
	if err != nil {
		return nil, err
	}
	if a.kind != kindObject {
		return nil, errorf(v.pos, "arguments: %s is %s, not an object", v.text, a.kind)
	}
	return a.json(), nil
}

func (x *runner) uiOp(s *Step) (UIOp, error) {
	u := s.ui
	op := UIOp{Action: s.Kind, Append: u.append, Direction: u.direction, Condition: u.condition, Poll: u.poll,
		StableSamples: u.samples, Assert: u.assert, Timeout: u.timeout}
	fields := []struct {
		src *value
		dst *string
	}{{u.sel.automationID, &op.Selector.AutomationID}, {u.sel.text, &op.Selector.Text}, {u.sel.role, &op.Selector.Role},
		{u.sel.ancestor, &op.Selector.Ancestor}, {u.value, &op.Value}}
	for _, f := range fields {
		s, err := x.sc.expandString(f.src)
		if err != nil {
			return op, err
		}
		*f.dst = s
	}
	op.Selector.Index, op.Selector.Contains, op.Selector.CaseSensitive = u.sel.index, u.sel.contains, u.sel.caseSensitive
	for _, f := range []struct {
		src *value
		dst **string
	}{{u.expectedText, &op.Assert.ExpectedText}, {u.expectedValue, &op.Assert.ExpectedValue}} {
		if f.src == nil {
			continue
		}
		s, err := x.sc.expandString(f.src)
		if err != nil {
			return op, err
		}
		*f.dst = &s
	}
	return op, nil
}

// toolFailure is the outcome of a tool's (or the host's) refusal: its error object is the
// document expect reads after expectError.
func toolFailure(e *hostapi.ToolError, fallback string) (*outcome, error) {
	if e == nil {
		return &outcome{code: "failed", kind: "failed", msg: fallback, doc: &value{kind: kindNull}}, nil
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return &outcome{code: string(e.Code), kind: e.Kind.String(), msg: e.Message, doc: mustParse(raw)}, nil
}

func resultOutcome(raw jsontext.Value) (*outcome, error) {
	doc, err := parseResult(raw)
	if err != nil {
		return nil, fmt.Errorf("the result is not JSON this runner can read: %w", err)
	}
	return &outcome{ok: true, doc: doc}, nil
}

// mustParse reads JSON this package encoded.
func mustParse(raw jsontext.Value) *value {
	v, err := parseResult(raw)
	if err != nil {
		return &value{kind: kindNull}
	}
	return v
}

// evidence keeps the screen and the visual tree of a failed step, as far as the app can
// give them within evidenceTimeout.
func (x *runner) evidence(ctx context.Context, sr *StepResult) {
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), evidenceTimeout)
	defer cancel()
	if sr.Screenshot == nil {
		if png, err := within(ectx, x.t.Screenshot); err == nil && len(png) > 0 {
			sr.Screenshot = &Screenshot{Name: "failure", Bytes: len(png), PNG: png}
		}
	}
	if tree, err := within(ectx, x.t.Tree); err == nil && len(tree) > 0 {
		sr.Tree = capOutput(tree)
	}
}
