package flow

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"go.uber.org/goleak"

	"github.com/ansight-go/ansight/hostapi"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func parse(t *testing.T, src string) *Flow {
	t.Helper()
	f, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func statuses(r *Result) string {
	var parts []string
	for _, s := range r.Steps {
		parts = append(parts, s.Phase+":"+string(s.Status))
	}
	return strings.Join(parts, " ")
}

// TestRunIssueExample runs the format's example flow (testdata/valid/notes.yaml) against
// the fake app: every step passes, the refusal it expects included.
func TestRunIssueExample(t *testing.T) {
	t.Parallel()
	f, err := Load("testdata/valid/notes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	app := newFakeApp()
	r := Run(context.Background(), f, app, Options{SessionID: "s1"})
	if r.Status != StatusPassed {
		t.Fatalf("%s: %+v", r.Status, r.Failure)
	}
	if got := app.calls(); got[len(got)-2] != `notes.get {"id":"n1"}` {
		t.Errorf("${note.id} was not sent: %q", got)
	}
	var shot *StepResult
	for _, s := range r.Steps {
		if s.Kind == KindScreenshot {
			shot = s
		}
	}
	if shot == nil || shot.Screenshot == nil || shot.Screenshot.Name != "note-open" || len(shot.Screenshot.PNG) == 0 {
		t.Errorf("screenshot step: %+v", shot)
	}
}

func TestFailureNamesStepExpectationActual(t *testing.T) {
	t.Parallel()
	f := parse(t, `schema: ansight.flow/v1
steps:
  - call: notes.create
    arguments: {title: Groceries, body: bread}
    expect:
      - {path: /body, contains: milk}
  - call: notes.list
`)
	r := Run(context.Background(), f, newFakeApp(), Options{})
	if r.Status != StatusFailed || statuses(r) != "steps:failed steps:skipped" {
		t.Fatalf("%s %s", r.Status, statuses(r))
	}
	fl := r.Failure
	if fl.Step != "steps[0] call notes.create" || fl.Pos.Line != 3 || fl.Expectation != `/body contains "milk"` || fl.Actual != `"bread"` {
		t.Errorf("failure %+v", fl)
	}
	if !strings.Contains(fl.Message, "t.yaml:3:5") {
		t.Errorf("the message does not say where: %s", fl.Message)
	}
	if s := r.Steps[0]; s.Screenshot == nil || len(s.Tree) == 0 {
		t.Errorf("no evidence kept for the failing step: %+v", s)
	}
}

func TestUnexpectedToolError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, step, status, want string
	}{
		{"tool error", "call: notes.get\n    arguments: {id: n9}", "failed", "tool_execution_failed: no note n9"},
		{"expected error, success", "call: notes.list\n    expectError: {}", "failed", "expected an error, but it succeeded"},
		{"other code", "call: notes.get\n    arguments: {id: n9}\n    expectError: {code: tool_policy_not_granted}", "failed", "expected an error tool_policy_not_granted, got tool_execution_failed (failed)"},
		{"kind matches", "call: notes.delete_all\n    expectError: {kind: denied}", "passed", ""},
		{"expect reads the error", "call: notes.delete_all\n    expectError: {code: tool_policy_not_granted}\n    expect: [{path: /message, contains: critical}, {path: /kind, equals: denied}]", "passed", ""},
		{"host failure", "call: gone", "error", `no session "s1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := Run(context.Background(), parse(t, "schema: ansight.flow/v1\nsteps:\n  - "+tc.step+"\n"), newFakeApp(), Options{})
			if string(r.Status) != tc.status {
				t.Fatalf("status %s, want %s (%+v)", r.Status, tc.status, r.Failure)
			}
			if tc.want != "" && !strings.Contains(r.Failure.Message, tc.want) {
				t.Errorf("message %q, want %q", r.Failure.Message, tc.want)
			}
		})
	}
}

func TestSetupTeardown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src, status, steps string
	}{
		{"all pass", `
setup: [{call: notes.create, arguments: {title: a}}]
steps: [{call: notes.list, expect: {path: /count, equals: 1}}]
teardown: [{call: notes.list}]`, "passed", "setup:passed steps:passed teardown:passed"},
		{"setup fails: steps skipped, teardown runs", `
setup: [{call: notes.get, arguments: {id: none}}, {call: notes.list}]
steps: [{call: notes.list}]
teardown: [{call: notes.list}, {call: notes.list}]`, "failed", "setup:failed setup:skipped steps:skipped teardown:passed teardown:passed"},
		{"step fails: teardown runs every step", `
steps: [{call: notes.get, arguments: {id: none}}]
teardown: [{call: notes.get, arguments: {id: none}}, {call: notes.list}]`, "failed", "steps:failed teardown:failed teardown:passed"},
		{"teardown failure fails the flow", `
steps: [{call: notes.list}]
teardown: [{call: notes.get, arguments: {id: none}}]`, "failed", "steps:passed teardown:failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := Run(context.Background(), parse(t, "schema: ansight.flow/v1"+tc.src), newFakeApp(), Options{})
			if string(r.Status) != tc.status || statuses(r) != tc.steps {
				t.Errorf("got %s %q, want %s %q", r.Status, statuses(r), tc.status, tc.steps)
			}
		})
	}
}

func TestRetry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		attempts int
		status   Status
	}{{3, StatusPassed}, {2, StatusFailed}} {
		t.Run(string(tc.status), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				src := "schema: ansight.flow/v1\nsteps:\n  - call: flaky\n    retry: {attempts: " + string(rune('0'+tc.attempts)) + ", delay: 1s}\n    expect: {path: /attempt, equals: 3}\n"
				r := Run(context.Background(), parse(t, src), newFakeApp(), Options{})
				s := r.Steps[0]
				if r.Status != tc.status || s.Attempts != tc.attempts {
					t.Fatalf("%s after %d attempts: %+v", r.Status, s.Attempts, r.Failure)
				}
				if tc.status == StatusFailed && !strings.Contains(r.Failure.Message, "failure 2 (after 2 attempts)") {
					t.Errorf("message: %s", r.Failure.Message)
				}
				// Two waits of 1s between three attempts, on the bubble's clock.
				if tc.status == StatusPassed && s.DurationMS != 2000 {
					t.Errorf("took %d ms of fake time, want 2000", s.DurationMS)
				}
			})
		})
	}
}

// TestStepNeverReturns: a call the target never answers ends at the step's timeout, or at
// the flow's, and the teardown still runs.
func TestStepNeverReturns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src, want string
		ms              int64
	}{
		{"step timeout", "timeout: 1h\nsteps:\n  - call: hang\n    timeout: 3s\n  - call: notes.list\nteardown: [{call: notes.list}]",
			"the step did not finish within its timeout (3s)", 3000},
		{"flow timeout", "timeout: 2s\nsteps:\n  - call: hang\n    timeout: 1m\nteardown: [{call: notes.list}]",
			"the flow's timeout (2s) ran out during this step", 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				app := newFakeApp()
				defer close(app.release)
				r := Run(context.Background(), parse(t, "schema: ansight.flow/v1\n"+tc.src), app, Options{})
				if r.Status != StatusFailed || !strings.Contains(r.Failure.Message, tc.want) {
					t.Fatalf("%s: %+v", r.Status, r.Failure)
				}
				if r.Steps[0].DurationMS != tc.ms {
					t.Errorf("the step took %d ms of fake time, want %d", r.Steps[0].DurationMS, tc.ms)
				}
				if last := r.Steps[len(r.Steps)-1]; last.Phase != "teardown" || last.Status != StatusPassed {
					t.Errorf("teardown: %+v", last)
				}
			})
		})
	}
}

// TestTeardownAfterCancel: cancelling the run (Ctrl-C) skips the rest of the steps, not
// the teardown.
func TestTeardownAfterCancel(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		app := newFakeApp()
		defer close(app.release)
		ctx, cancel := context.WithCancel(context.Background())
		f := parse(t, "schema: ansight.flow/v1\nsteps:\n  - call: hang\n  - call: notes.list\nteardown: [{call: notes.create, arguments: {title: cleanup}}]\n")
		done := make(chan *Result)
		go func() { done <- Run(ctx, f, app, Options{}) }()
		synctest.Wait()
		cancel()
		r := <-done
		if statuses(r) != "steps:failed steps:skipped teardown:passed" {
			t.Errorf("%s", statuses(r))
		}
	})
}

func TestVariables(t *testing.T) {
	t.Parallel()
	saved, err := parseResult([]byte(`{"id":"n1","count":3,"ok":true,"items":[{"id":"a"},{"id":"b"}],"tags":["x"],"nothing":null}`))
	if err != nil {
		t.Fatal(err)
	}
	sc := &scope{saved: map[string]*value{"note": saved}, vars: map[string]string{"user": "ann"},
		env: func(k string) (string, bool) { return map[string]string{"HOME": "/home/ann"}[k], k == "HOME" }}
	for _, tc := range []struct{ in, want, err string }{
		{"${note.id}", `"n1"`, ""},
		{"${note.count}", `3`, ""},
		{"${note.ok}", `true`, ""},
		{"${note.items.1.id}", `"b"`, ""},
		{"${note.items}", `[{"id":"a"},{"id":"b"}]`, ""},
		{"${note.nothing}", `null`, ""},
		{"${note}", `{"id":"n1","count":3,"ok":true,"items":[{"id":"a"},{"id":"b"}],"tags":["x"],"nothing":null}`, ""},
		{"count=${note.count}", `"count=3"`, ""},
		{"tags ${note.tags} of ${var.user}", `"tags [\"x\"] of ann"`, ""},
		{"${env.HOME}/notes", `"/home/ann/notes"`, ""},
		{"$${note.id} is literal", `"${note.id} is literal"`, ""},
		{"cost: $5 ${var.user}", `"cost: $5 ann"`, ""},
		{"${note.items.2.id}", "", "note.items is an array of 2, with no element 2"},
		{"${note.id.x}", "", "note.id is a string, not an object or array"},
		{"${note.missing}", "", `note has no member "missing"`},
		{"${other.id}", "", `nothing was saved as "other"`},
		{"${var.nobody}", "", "${var.nobody} is not set"},
		{"${env.NOPE}", "", "the environment variable NOPE is not set"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			tm, err := parseTemplate(tc.in, Pos{File: "t.yaml", Line: 1, Col: 1})
			if err != nil {
				t.Fatal(err)
			}
			v, err := sc.expand(tm)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "t.yaml:1:1") {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := string(v.json()); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// TestWholeReferenceKeepsType: a value that is one ${…} is sent with its JSON type.
func TestWholeReferenceKeepsType(t *testing.T) {
	t.Parallel()
	app := newFakeApp()
	f := parse(t, `schema: ansight.flow/v1
vars: {title: Groceries}
steps:
  - call: notes.list
    save: list
  - call: notes.create
    arguments: {title: "${var.title}", body: "${list.count}", n: "${list.count}x", all: "${list}"}
`)
	if r := Run(context.Background(), f, app, Options{Vars: map[string]string{"title": "Shopping"}}); r.Status != StatusPassed {
		t.Fatalf("%+v", r.Failure)
	}
	want := `notes.create {"title":"Shopping","body":0,"n":"0x","all":{"notes":[],"count":0}}`
	if got := app.calls()[1]; got != want {
		t.Errorf("sent %s\nwant %s", got, want)
	}
}

func TestMissingVariableBeforeRunning(t *testing.T) {
	t.Parallel()
	app := newFakeApp()
	f := parse(t, "schema: ansight.flow/v1\nsteps:\n  - call: notes.list\n  - call: notes.create\n    arguments: {title: \"${var.title}\"}\n")
	r := Run(context.Background(), f, app, Options{})
	if r.Status != StatusError || len(app.calls()) != 0 {
		t.Fatalf("%s, calls %v", r.Status, app.calls())
	}
	if !strings.Contains(r.Failure.Message, "t.yaml:5:24: steps[1] call notes.create: ${var.title} has no value") {
		t.Errorf("%s", r.Failure.Message)
	}
}

func TestExpectOperators(t *testing.T) {
	t.Parallel()
	doc, _ := parseResult([]byte(`{"title":"Groceries","n":12345678901234567890,"f":1.5,"list":[1,"two",{"a":1}],"obj":{"a":1,"b":2},"a/b":"slash","e":"","nul":null}`))
	for _, tc := range []struct {
		exp  string
		pass bool
	}{
		{`{path: /title, equals: Groceries}`, true},
		{`{path: /title, equals: groceries}`, false},
		{`{path: /n, equals: 12345678901234567890}`, true},
		{`{path: /n, equals: 12345678901234567891}`, false},
		{`{path: /f, equals: 1.50}`, true},
		{`{path: /obj, equals: {b: 2, a: 1}}`, true},
		{`{path: /list, equals: [1, two, {a: 1}]}`, true},
		{`{path: /nul, equals: null}`, true},
		{`{path: /title, contains: ocer}`, true},
		{`{path: /title, contains: milk}`, false},
		{`{path: /list, contains: two}`, true},
		{`{path: /list, contains: {a: 1}}`, true},
		{`{path: /list, contains: 3}`, false},
		{`{path: /obj, contains: {a: 1}}`, true},
		{`{path: /obj, contains: {a: 2}}`, false},
		{`{path: /list, contains: {a: 1, b: 2}}`, false},
		{`{path: "", contains: {list: [1, "two", {a: 1}]}}`, true},
		{`{path: /title, matches: "^Gro"}`, true},
		{`{path: /title, matches: "^gro"}`, false},
		{`{path: /n, matches: "^[0-9]+$"}`, true},
		{`{path: /obj, matches: "a"}`, false},
		{`{path: /title, exists: true}`, true},
		{`{path: /missing, exists: false}`, true},
		{`{path: /missing, exists: true}`, false},
		{`{path: /a~1b, equals: slash}`, true},
		{`{path: /list/2/a, equals: 1}`, true},
		{`{path: /list/01, exists: false}`, true},
		{`{path: /title, length: 9}`, true},
		{`{path: /list, length: 3}`, true},
		{`{path: /obj, length: 3}`, false},
		{`{path: /e, length: 0}`, true},
		{`{path: /n, length: 1}`, false},
		{`{path: /f, gt: 1, lt: 2}`, true},
		{`{path: /f, gt: 1.5}`, false},
		{`{path: /n, gt: 12345678901234567889}`, true},
		{`{path: /title, lt: 5}`, false},
		{`{path: /obj, schema: {type: object, properties: {a: {type: integer}, b: {type: integer}}}}`, true},
		{`{path: /obj, schema: {type: object, properties: {a: {type: integer}}}}`, false},
		{`{path: /obj, schema: {type: object, properties: {a: {type: string}}, additionalProperties: true}}`, false},
		{`{path: "", schema: {type: object, required: [title], additionalProperties: true}}`, true},
		{`{path: /missing, equals: 1}`, false},
	} {
		t.Run(tc.exp, func(t *testing.T) {
			t.Parallel()
			f, err := Parse("e.yaml", []byte("schema: ansight.flow/v1\nsteps:\n  - call: x\n    expect: ["+tc.exp+"]\n"))
			if err != nil {
				t.Fatal(err)
			}
			e := f.Steps[0].expects[0]
			actual, err := e.check(resolve(doc, e.toks), &scope{})
			if err != nil {
				t.Fatal(err)
			}
			raw := doc.json()
			got, err := lookup(raw, e.toks)
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := e.check(got, &scope{}); again != actual {
				t.Errorf("in place: %q, from the tree: %q", again, actual)
			}
			if err != nil {
				t.Fatal(err)
			}
			if (actual == "") != tc.pass {
				t.Errorf("%s: pass %v, want %v (actual %s)", e, actual == "", tc.pass, actual)
			}
		})
	}
}

func TestInclude(t *testing.T) {
	t.Parallel()
	f, err := Load("testdata/valid/all-kinds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Run only the include against the fake, to see its steps listed in its place.
	inc := &Flow{File: f.File, Timeout: DefaultTimeout, TeardownTimeout: DefaultTeardownTimeout, Steps: []*Step{f.Steps[13]},
		Teardown: []*Step{{Kind: KindCall, Tool: "notes.list", Attempts: 1, Pos: f.Steps[13].Pos}}}
	app := &stateApp{fakeApp: newFakeApp()}
	r := Run(context.Background(), inc, app, Options{})
	if r.Status != StatusPassed || len(r.Steps) != 2 || r.Steps[0].Label != "include included/login.yaml › call app.get_state" {
		t.Fatalf("%s %+v %+v", r.Status, r.Failure, r.Steps[0])
	}
	if !strings.HasSuffix(r.Steps[0].Pos.File, "included/login.yaml") {
		t.Errorf("the included step's position: %v", r.Steps[0].Pos)
	}
}

// stateApp adds app.get_state to the fake.
type stateApp struct{ *fakeApp }

func (s *stateApp) Call(ctx context.Context, req hostapi.CallRequest) (*hostapi.Call, error) {
	if req.ToolID == "app.get_state" {
		return ok(req.ToolID, map[string]string{"screen": "list"}), nil
	}
	return s.fakeApp.Call(ctx, req)
}

func TestUISteps(t *testing.T) {
	t.Parallel()
	app := newFakeApp()
	f := parse(t, `schema: ansight.flow/v1
steps:
  - call: notes.create
    arguments: {title: Groceries, body: milk}
    save: note
  - tap: {text: "${note.title}"}
  - wait: {text: mil, contains: true}
  - assert: {text: bread, absent: true}
  - wait: {text: milk, condition: hidden, timeout: 1s}
`)
	r := Run(context.Background(), f, app, Options{})
	if statuses(r) != "steps:passed steps:passed steps:passed steps:passed steps:failed" {
		t.Fatalf("%s", statuses(r))
	}
	if !strings.Contains(r.Failure.Message, "the selector text=milk matched 2 nodes") && !strings.Contains(r.Failure.Message, "matched 1 nodes") {
		t.Errorf("%s", r.Failure.Message)
	}
	if got := app.calls()[1]; got != "ui tap Groceries" {
		t.Errorf("the tap's selector was not expanded: %q", got)
	}
}
