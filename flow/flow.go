package flow

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
	"strings"
	"time"
)

// Schema is the value of a flow file's top-level schema member.
const Schema = "ansight.flow/v1"

// Defaults and bounds of the format's durations and counts.
const (
	// DefaultTimeout bounds a flow's setup and steps when it gives no timeout.
	DefaultTimeout = 10 * time.Minute
	// DefaultTeardownTimeout bounds a flow's teardown, which runs after the timeout too.
	DefaultTeardownTimeout = 30 * time.Second
	// MaxTimeout bounds a flow's timeout, MaxStepTimeout a step's.
	MaxTimeout     = 24 * time.Hour
	MaxStepTimeout = time.Hour
	// MaxSteps bounds the steps of a flow with its includes expanded.
	MaxSteps = 10_000
	// MaxIncludeDepth bounds how deep includes nest.
	MaxIncludeDepth = 16
	// MaxAttempts bounds a step's retry attempts.
	MaxAttempts = 100
	// MaxBatchCalls bounds the calls of a batch step, as the protocol does.
	MaxBatchCalls = 32
)

// A Flow is one parsed flow file: what to run against one app session, in three phases.
// Setup and steps run in order until one fails; teardown always runs afterwards.
type Flow struct {
	// File is the path the flow was loaded from, as given.
	File        string
	Name        string
	Description string
	// AppID is the app the flow is for; a command line's --session or --app-id wins.
	AppID string
	// Timeout bounds setup and steps together; TeardownTimeout the teardown after them.
	Timeout         time.Duration
	TeardownTimeout time.Duration
	// Vars are the defaults of ${var.NAME}; --var values win.
	Vars     map[string]string
	Setup    []*Step
	Steps    []*Step
	Teardown []*Step
}

// StepKind names what a step does: the one key among a step's keys that is not common to
// all (call, batch, tap, type, swipe, back, wait, assert, screenshot, include).
type StepKind string

// The step kinds.
const (
	KindCall       StepKind = "call"
	KindBatch      StepKind = "batch"
	KindTap        StepKind = "tap"
	KindType       StepKind = "type"
	KindSwipe      StepKind = "swipe"
	KindBack       StepKind = "back"
	KindWait       StepKind = "wait"
	KindAssert     StepKind = "assert"
	KindScreenshot StepKind = "screenshot"
	KindInclude    StepKind = "include"
)

// stepKinds lists the kinds in the order the documentation gives them.
var stepKinds = []StepKind{KindCall, KindBatch, KindTap, KindType, KindSwipe, KindBack, KindWait, KindAssert, KindScreenshot, KindInclude}

// IsUI reports whether steps of kind k act on or read the app's screen through the
// host's selector resolution.
func (k StepKind) IsUI() bool {
	switch k {
	case KindTap, KindType, KindSwipe, KindBack, KindWait, KindAssert:
		return true
	}
	return false
}

// A Step is one thing a flow does, with what it expects of the outcome.
type Step struct {
	Kind StepKind
	// Name is the step's own label (name:), if it has one.
	Name string
	// Pos is where the step begins in its file.
	Pos Pos
	// Tool is the tool a call step calls.
	Tool string
	// Include is an include step's path as written; Included the flow it names.
	Include  string
	Included *Flow
	// Timeout bounds each attempt; without one, the flow's timeout and the host's limit on
	// each call (derived from what it asks for) bound it. A call's Timeout is also sent to
	// the host as the call's limit (timeoutMs).
	Timeout time.Duration
	// Attempts is how many times the step runs until it passes (1 without retry:),
	// RetryDelay the wait between attempts.
	Attempts   int
	RetryDelay time.Duration
	// Save is the name later steps read the outcome under (${name.path}).
	Save string

	args            *value
	argsJSON        jsontext.Value // args without variables, encoded once
	calls           []batchCall
	continueOnError bool
	ui              *uiStep
	shot            string
	expects         []*expectation
	expectErr       *expectError
}

// batchCall is one call of a batch step.
type batchCall struct {
	tool     string
	args     *value
	argsJSON jsontext.Value
	callID   string
}

// uiStep is what a UI step asks of the screen.
type uiStep struct {
	sel       selector
	value     *value // type: the text
	append    bool
	direction string // swipe
	condition string // wait: visible, hidden or stable
	timeout   time.Duration
	poll      time.Duration
	samples   int
	// assert: what the matched node must be; the expected strings are templates.
	exists, expectedVisible, expectedEnabled *bool
	count                                    *int
	absent                                   bool
	expectedText, expectedValue              *value
}

// selector is a step's selector, with templates in its strings.
type selector struct {
	automationID, text, role, ancestor *value
	index                              *int
	contains, caseSensitive            bool
}

// Label is a short description of the step for progress lines and reports: its name if it
// has one, else what it does ("call notes.create", "tap text=Groceries").
func (s *Step) Label() string {
	if s.Name != "" {
		return s.Name
	}
	switch s.Kind {
	case KindCall:
		return "call " + s.Tool
	case KindBatch:
		tools := make([]string, len(s.calls))
		for i, c := range s.calls {
			tools[i] = c.tool
		}
		return "batch " + strings.Join(tools, ", ")
	case KindScreenshot:
		return "screenshot " + s.shot
	case KindInclude:
		return "include " + s.Include
	case KindBack:
		return "back"
	}
	if s.ui == nil {
		return string(s.Kind)
	}
	return string(s.Kind) + " " + s.ui.sel.String()
}

// String writes the selector as the CLI's flags would say it: text=Groceries role=button.
func (s selector) String() string {
	var parts []string
	add := func(name string, v *value) {
		if v != nil {
			parts = append(parts, fmt.Sprintf("%s=%s", name, v.text))
		}
	}
	add("automationId", s.automationID)
	add("text", s.text)
	add("role", s.role)
	add("ancestor", s.ancestor)
	if s.index != nil {
		parts = append(parts, fmt.Sprintf("index=%d", *s.index))
	}
	if s.contains {
		parts = append(parts, "contains")
	}
	if s.caseSensitive {
		parts = append(parts, "caseSensitive")
	}
	if len(parts) == 0 {
		return "(any)"
	}
	return strings.Join(parts, " ")
}

// Count returns the steps of f with its includes expanded, teardown included.
func (f *Flow) Count() int {
	n := 0
	for _, list := range [][]*Step{f.Setup, f.Steps, f.Teardown} {
		for _, s := range list {
			if s.Included != nil {
				n += s.Included.Count()
			} else {
				n++
			}
		}
	}
	return n
}
