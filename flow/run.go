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
	"github.com/ansight-go/ansight/uiauto"
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
	x.worker.stop()
	r.DurationMS = time.Since(r.StartedAt).Milliseconds()
	return r
}

// undated is a context that ends with its parent but reports no deadline. A flow's
// timeout ends the step in progress, but is not the limit of each call: without a step
// timeout, the host derives that from what the call asks for (host/tools' deadline model,
// which reads any context deadline as the caller's own limit).
type undated struct{ context.Context }

func (undated) Deadline() (time.Time, bool) { return time.Time{}, false }

// defaultName is a flow's name when it gives none: its file's name without the extension.
func defaultName(file string) string {
	base := file[strings.LastIndexAny(file, `/\`)+1:]
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	return base
}

type runner struct {
	t      Target
	opts   Options
	res    *Result
	sc     *scope
	worker worker
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
	main = undated{main}
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
		if !x.step(undated{td}, "teardown", i, s, prefix, vars, f.TeardownTimeout) {
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
// document its expectations read. The document is read from raw only when a step expects
// something of it or saves it.
type outcome struct {
	ok  bool
	raw jsontext.Value
	doc *value
	// code, kind and msg describe the failure.
	code, kind, msg string
}

// document returns the outcome read as a value (null when there is none).
func (o *outcome) document() (*value, error) {
	if o.doc == nil {
		doc, err := parseResult(o.raw)
		if err != nil {
			return nil, fmt.Errorf("the outcome is not JSON this runner can read: %w", err)
		}
		o.doc = doc
	}
	return o.doc, nil
}

// hostError is a failure of the host or the session, not of the step's tool.
type hostError struct{ err error }

func (e *hostError) Error() string { return e.err.Error() }
func (e *hostError) Unwrap() error { return e.err }

// attempt runs the step once within its timeout and checks what it expects.
func (x *runner) attempt(ctx context.Context, s *Step, sr *StepResult, budget time.Duration) (Status, *Failure) {
	// Without a timeout of its own, a step is bounded by the flow's and by the host's
	// limit on each call (derived from what the call asks for: docs/control-api.md).
	timeout := s.Timeout
	actx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	out, err := x.act(actx, func(c context.Context) (any, error) { return x.do(c, s, sr, timeout) })
	if err != nil {
		var fe *Error
		switch {
		case errors.As(err, &fe):
			return StatusError, &Failure{Message: fe.Msg}
		case ctx.Err() != nil:
			return StatusFailed, &Failure{Expectation: "to finish within the flow's timeout", Actual: "still running", Message: fmt.Sprintf("the flow's timeout (%v) ran out during this step", budget)}
		case timeout > 0 && (actx.Err() != nil || wire.CodeOf(err) == wire.CodeTimeout):
			// The host's limit for the call is the step's timeout: either may end it first.
			return StatusFailed, &Failure{Expectation: fmt.Sprintf("to finish within %v", timeout), Actual: "still running", Message: fmt.Sprintf("the step did not finish within its timeout (%v)", timeout)}
		}
		if wire.CodeOf(err) == wire.CodeTimeout {
			return StatusFailed, &Failure{Expectation: "an answer within the host's limit", Actual: err.Error(), Message: err.Error()}
		}
		var he *hostError
		if errors.As(err, &he) {
			return StatusError, &Failure{Actual: he.Error(), Message: he.Error()}
		}
		return StatusFailed, &Failure{Actual: err.Error(), Message: err.Error()}
	}
	o := out.(*outcome)
	if len(o.raw) > 0 {
		sr.Output = capOutput(o.raw)
	}
	return x.judge(s, o)
}

// worker runs a flow's actions on a goroutine of its own, one at a time, so that the
// runner can stop waiting for one at its deadline: an action a Target never returns from
// keeps its goroutine (until the Target returns), and the next action gets a new one. One
// long-lived goroutine rather than one per action: starting a goroutine and growing its
// stack down the host's call path cost about as much as the runner's own work per step.
type worker struct {
	jobs chan job
}

type job struct {
	ctx   context.Context
	fn    func(context.Context) (any, error)
	reply chan answer
}

type answer struct {
	v   any
	err error
}

// act runs one action of the Target: on the runner's goroutine for a Target bound by its
// context (its calls end when their context does, as the host API's do), else on the worker.
func (x *runner) act(ctx context.Context, fn func(context.Context) (any, error)) (any, error) {
	if _, ok := x.t.(contextBound); !ok {
		return x.worker.run(ctx, fn)
	}
	v, err := fn(ctx)
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return v, err
}

// contextBound is implemented by the Targets of this package whose every method returns
// when its context ends (SessionTarget: the host API's calls have deadlines of their own
// and end with their context).
type contextBound interface{ contextBound() }

// run runs fn on the worker and returns its answer, or ctx's error when ctx ends first.
func (w *worker) run(ctx context.Context, fn func(context.Context) (any, error)) (any, error) {
	if w.jobs == nil {
		w.jobs = make(chan job)
		go work(w.jobs)
	}
	j := job{ctx: ctx, fn: fn, reply: make(chan answer, 1)}
	w.jobs <- j
	select {
	case a := <-j.reply:
		if a.err != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if a.err != nil {
			return nil, a.err
		}
		return a.v, nil
	case <-ctx.Done():
		// Abandon the worker to the action it is stuck in: it ends once that returns.
		close(w.jobs)
		w.jobs = nil
		return nil, ctx.Err()
	}
}

// stop ends the worker once it is idle.
func (w *worker) stop() {
	if w.jobs != nil {
		close(w.jobs)
		w.jobs = nil
	}
}

func work(jobs <-chan job) {
	for j := range jobs {
		v, err := j.fn(j.ctx)
		j.reply <- answer{v, err}
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
			return StatusFailed, &Failure{Expectation: e.String(), Actual: "success: " + shorten(string(out.raw), 200),
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
	if len(s.expects) == 0 && s.Save == "" {
		return StatusPassed, nil
	}
	// A step that saves its outcome, or checks several of its values, reads it into a
	// tree once; one that checks one or two values finds them in place.
	var doc *value
	if s.Save != "" || len(s.expects) > 2 {
		var err error
		if doc, err = out.document(); err != nil {
			return StatusError, &Failure{Message: err.Error()}
		}
	}
	for _, e := range s.expects {
		var got *value
		if doc != nil {
			got = resolve(doc, e.toks)
		} else {
			var err error
			if got, err = lookup(out.raw, e.toks); err != nil {
				return StatusError, &Failure{Message: "the outcome is not JSON this runner can read: " + err.Error()}
			}
		}
		actual, err := e.check(got, x.sc)
		if err != nil {
			return StatusError, &Failure{Expectation: e.String(), Message: err.Error()}
		}
		if actual != "" {
			return StatusFailed, &Failure{Expectation: e.String(), Actual: actual,
				Message: fmt.Sprintf("expected %s (%s), got %s", e, e.pos, actual)}
		}
	}
	if s.Save != "" {
		x.sc.saved[s.Save] = doc
	}
	return StatusPassed, nil
}

// do performs the step's action.
func (x *runner) do(ctx context.Context, s *Step, sr *StepResult, timeout time.Duration) (*outcome, error) {
	switch s.Kind {
	case KindCall:
		args, err := x.args(s.args, s.argsJSON)
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
			args, err := x.args(bc.args, bc.argsJSON)
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
			return &outcome{code: "batch_failed", kind: "failed", msg: "the batch did not succeed", raw: raw}, nil
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
	req, err := x.uiRequest(s)
	if err != nil {
		return nil, err
	}
	u, err := x.t.UI(ctx, req)
	if err != nil {
		return nil, &hostError{err}
	}
	var raw jsontext.Value
	if u.Result != nil {
		if raw, err = json.Marshal(u.Result); err != nil {
			return nil, err
		}
	}
	if !u.Succeeded {
		code := cmpOr(string(u.Code), "ui_failed")
		return &outcome{code: code, kind: wire.Code(code).Kind().String(), msg: u.Message, raw: raw}, nil
	}
	return resultOutcome(raw)
}

func (x *runner) args(v *value, constant jsontext.Value) (jsontext.Value, error) {
	if v == nil || constant != nil {
		return constant, nil
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

// uiRequest is a UI step's operation with its variables expanded.
func (x *runner) uiRequest(s *Step) (uiauto.Request, error) {
	u := s.ui
	req := uiauto.Request{Operation: string(s.Kind), Append: u.append, Direction: u.direction, Condition: u.condition,
		PollMs: int(u.poll.Milliseconds()), StableSamples: u.samples,
		Exists: u.exists, Count: u.count, ExpectedVisible: u.expectedVisible, ExpectedEnabled: u.expectedEnabled}
	if u.timeout > 0 {
		ms := int(u.timeout.Milliseconds())
		req.TimeoutMs = &ms
	}
	if u.absent {
		zero, no := 0, false
		req.Count, req.Exists = &zero, &no
	}
	fields := []struct {
		src *value
		dst *string
	}{{u.sel.automationID, &req.Selector.AutomationID}, {u.sel.text, &req.Selector.Text}, {u.sel.role, &req.Selector.Role},
		{u.sel.ancestor, &req.Selector.Ancestor}}
	for _, f := range fields {
		v, err := x.sc.expandString(f.src)
		if err != nil {
			return req, err
		}
		*f.dst = v
	}
	req.Selector.Index, req.Selector.Contains, req.Selector.CaseSensitive = u.sel.index, u.sel.contains, u.sel.caseSensitive
	for _, f := range []struct {
		src *value
		dst **string
	}{{u.value, &req.Value}, {u.expectedText, &req.ExpectedText}, {u.expectedValue, &req.ExpectedValue}} {
		if f.src == nil {
			continue
		}
		v, err := x.sc.expandString(f.src)
		if err != nil {
			return req, err
		}
		*f.dst = &v
	}
	return req, nil
}

// toolFailure is the outcome of a tool's (or the host's) refusal: its error object is the
// document expect reads after expectError.
func toolFailure(e *hostapi.ToolError, fallback string) (*outcome, error) {
	if e == nil {
		return &outcome{code: "failed", kind: "failed", msg: fallback}, nil
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return &outcome{code: string(e.Code), kind: e.Kind.String(), msg: e.Message, raw: raw}, nil
}

func resultOutcome(raw jsontext.Value) (*outcome, error) {
	return &outcome{ok: true, raw: raw}, nil
}

// evidence keeps the screen and the visual tree of a failed step, as far as the app can
// give them within evidenceTimeout.
func (x *runner) evidence(ctx context.Context, sr *StepResult) {
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), evidenceTimeout)
	defer cancel()
	if sr.Screenshot == nil {
		if png, err := x.act(ectx, func(c context.Context) (any, error) { return x.t.Screenshot(c) }); err == nil && len(png.([]byte)) > 0 {
			sr.Screenshot = &Screenshot{Name: "failure", Bytes: len(png.([]byte)), PNG: png.([]byte)}
		}
	}
	if tree, err := x.act(ectx, func(c context.Context) (any, error) { return x.t.Tree(c) }); err == nil && len(tree.(jsontext.Value)) > 0 {
		sr.Tree = capOutput(tree.(jsontext.Value))
	}
}
