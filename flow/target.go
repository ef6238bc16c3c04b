package flow

import (
	"context"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/uitree"
)

// Target is the app session a flow runs against. Its implementations are a session behind a
// hostapi.Backend (the CLI's) and fakes in tests. Each method must return when ctx ends; the
// runner does not wait for one that does not (it ends the step at its deadline regardless).
type Target interface {
	// Call and Batch call the app's tools as the host API does: a tool's failure is a Call
	// or Batch with Success false, an error is a failure of the host or the session.
	Call(ctx context.Context, req hostapi.CallRequest) (*hostapi.Call, error)
	Batch(ctx context.Context, req hostapi.BatchRequest) (*hostapi.Batch, error)
	// UI resolves a selector on the app's screen and acts on, waits for or asserts it, as
	// 'ansight ui' does: an action waits for its target to be actionable within op.Timeout.
	UI(ctx context.Context, op UIOp) (*UIOutcome, error)
	// Screenshot returns the app's screen as PNG.
	Screenshot(ctx context.Context) ([]byte, error)
	// Tree returns the app's visual tree (the ui.get_visual_tree result), kept in the report
	// of a failing step.
	Tree(ctx context.Context) (jsontext.Value, error)
}

// UIOp is one UI step for Target.UI: its kind (tap, type, swipe, back, wait, assert), the
// selector with every variable expanded, and the kind's own parameters.
type UIOp struct {
	Action StepKind
	// Selector is the one selector model of the UI layer, with the official semantics.
	Selector uitree.Selector
	// Value and Append: type. Direction: swipe (up, down, left, right). Condition,
	// Poll and StableSamples: wait (visible, hidden, stable). Assert: assert.
	Value         string
	Append        bool
	Direction     string
	Condition     string
	Poll          time.Duration
	StableSamples int
	Assert        UIAssert
	// Timeout is how long an action waits for its target and a wait for its condition
	// (0: the implementation's default, 5 s for actions and 10 s for waits as 'ansight ui').
	Timeout time.Duration
}

// UIAssert is what an assert step requires of the selector's matches ('ansight ui assert'
// flags): Exists defaults to Count != 0; Absent is Count 0.
type UIAssert struct {
	Exists          *bool   `json:"exists,omitzero"`
	Count           *int    `json:"count,omitzero"`
	Absent          bool    `json:"absent,omitzero"`
	ExpectedText    *string `json:"expectedText,omitzero"`
	ExpectedValue   *string `json:"expectedValue,omitzero"`
	ExpectedVisible *bool   `json:"expectedVisible,omitzero"`
	ExpectedEnabled *bool   `json:"expectedEnabled,omitzero"`
}

// UIOutcome is the outcome of a UI step. Succeeded false with Error set is the step's
// failure (nothing matched, the wait timed out, the assert did not hold), with Message
// saying why for a person; Result is the operation's result object.
type UIOutcome struct {
	Succeeded bool
	Message   string
	Result    jsontext.Value
	Error     *wire.Error
}
