package uiauto

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire/uitree"
)

// Operations, as the official CLI's ui verbs name them.
const (
	OpSnapshot = "snapshot"
	OpFind     = "find"
	OpTap      = "tap"
	OpType     = "type"
	OpSwipe    = "swipe"
	OpPinch    = "pinch"
	OpBack     = "back"
	OpWait     = "wait"
	OpAssert   = "assert"
	// OpAct performs any action of ui.perform_action (Action, ActionValue, ActionOptions)
	// on the selector's node, with the actions' auto-wait and stale-reference retry: how
	// the MCP bridge and the player act on a node they name (ours; no official verb).
	OpAct = "act"
)

// Operations lists every operation.
var Operations = []string{OpSnapshot, OpFind, OpTap, OpType, OpSwipe, OpPinch, OpBack, OpWait, OpAssert, OpAct}

// Wait conditions.
const (
	ConditionVisible = "visible"
	ConditionHidden  = "hidden"
	ConditionStable  = "stable"
)

// Defaults and ranges (the official CLI's where it has them).
const (
	DefaultMaxNodes      = 256   // snapshot, 1..2000
	DefaultMaxDepth      = 32    // snapshot and every capture, 1..64
	DefaultLimit         = 100   // find, 1..1000
	DefaultWaitTimeoutMs = 10000 // wait, 100..60000
	DefaultActionTimeout = 5000  // actions' auto-wait, 0..60000 (ours: the official verbs do not wait)
	DefaultPollMs        = 250   // wait, 100..5000
	DefaultActionPollMs  = 100   // actions' auto-wait
	DefaultStableSamples = 3     // wait stable, 2..20
	DefaultSwipeLength   = 0.4   // 0.05..0.9
	DefaultSwipeDuration = 250   // ms, 50..2000
	DefaultPinchDistance = 0.25  // 0.05..0.8
	DefaultPinchDuration = 300   // ms, 50..2000
	MaxTimeoutMs         = 60000
	maxReportedMatches   = 20 // a failed wait lists at most this many
	maxNearest           = 5
)

// Details of a result.
const (
	DetailCompact = "compact" // the host's projection of the tree (the default)
	DetailFull    = "full"    // the app's tree payload as it came (snapshot)
)

// Request is one UI operation. The zero values of the optional fields are the defaults.
type Request struct {
	// Operation is one of Operations.
	Operation string `json:"operation"`
	// Selector picks the target (all operations but snapshot and back). The operations
	// compare exactly unless Contains; find compares as substrings unless Exact (the
	// official defaults).
	Selector uitree.Selector `json:"selector,omitzero"`
	Exact    bool            `json:"exact,omitzero"`
	// Detail is "compact" (the default: the projection of the tree) or "full" (the app's
	// tree payload as it came, for snapshot).
	Detail string `json:"detail,omitzero"`

	// MaxNodes (1..2000, 256), MaxDepth (1..64, 32), IncludeBounds (true) and
	// IncludeProperties (false) shape a snapshot.
	MaxNodes          int   `json:"maxNodes,omitzero"`
	MaxDepth          int   `json:"maxDepth,omitzero"`
	IncludeBounds     *bool `json:"includeBounds,omitzero"`
	IncludeProperties bool  `json:"includeProperties,omitzero"`

	// Limit bounds find's matches (1..1000, 100).
	Limit int `json:"limit,omitzero"`

	// Value is the text type writes; Append adds it to the field's text instead of
	// replacing it. Focused types into the focused field when there is no selector (app
	// interact's type without a target).
	Value   *string `json:"value,omitzero"`
	Append  bool    `json:"append,omitzero"`
	Focused bool    `json:"focused,omitzero"`

	// Action, ActionValue and ActionOptions are act's ui.perform_action action, its value
	// (a JSON string, number or boolean) and options (a JSON object).
	Action        string         `json:"action,omitzero"`
	ActionValue   jsontext.Value `json:"actionValue,omitzero"`
	ActionOptions jsontext.Value `json:"actionOptions,omitzero"`

	// X and Y place a tap by coordinates (0..1 of the viewport, both) instead of a
	// selector: the node there is hit-tested, then its nearest ancestor that takes a tap.
	X *float64 `json:"x,omitzero"`
	Y *float64 `json:"y,omitzero"`

	// Condition is wait's: visible (default), hidden, stable.
	Condition string `json:"condition,omitzero"`
	// TimeoutMs is wait's budget (100..60000, 10000) and the actions' auto-wait budget
	// (0..60000, 5000; 0 makes one attempt, as the official verbs do). PollMs is the time
	// between captures (100..5000; 250 for wait, 100 for actions); StableSamples the equal
	// consecutive trees a stable wait needs (2..20, 3).
	TimeoutMs     *int `json:"timeoutMs,omitzero"`
	PollMs        int  `json:"pollMs,omitzero"`
	StableSamples int  `json:"stableSamples,omitzero"`

	// Assert's expectations: Exists (default: Count != 0), Count, and of the selected
	// node its text, value (exact, case-sensitive), visibility and enabled state.
	Exists          *bool   `json:"exists,omitzero"`
	Count           *int    `json:"count,omitzero"`
	ExpectedText    *string `json:"expectedText,omitzero"`
	ExpectedValue   *string `json:"expectedValue,omitzero"`
	ExpectedVisible *bool   `json:"expectedVisible,omitzero"`
	ExpectedEnabled *bool   `json:"expectedEnabled,omitzero"`

	// Swipe: Direction (up, down, left, right; up by default) or Orientation (a compass
	// path: "N", "SW", "E-to-W"), Length (0.05..0.9, 0.4) and DurationMs (50..2000, 250), or
	// the start and end points (0..1 of the viewport, all four), which are hit-tested.
	Direction   string   `json:"direction,omitzero"`
	Orientation string   `json:"orientation,omitzero"`
	Length      float64  `json:"length,omitzero"`
	DurationMs  int      `json:"durationMs,omitzero"`
	StartX      *float64 `json:"startX,omitzero"`
	StartY      *float64 `json:"startY,omitzero"`
	EndX        *float64 `json:"endX,omitzero"`
	EndY        *float64 `json:"endY,omitzero"`

	// Pinch: Scale (0.1..4, required), the centre (0..1, both), StartDistance
	// (0.05..0.8, 0.25), AngleDegrees, DurationMs (300).
	Scale         float64  `json:"scale,omitzero"`
	CenterX       *float64 `json:"centerX,omitzero"`
	CenterY       *float64 `json:"centerY,omitzero"`
	StartDistance float64  `json:"startDistance,omitzero"`
	AngleDegrees  float64  `json:"angleDegrees,omitzero"`
}

// Validate checks the request as the official CLI checks its flags: ranges, required and
// contradictory options. Its message names the option.
func (r *Request) Validate() error {
	bad := func(format string, args ...any) error { return fmt.Errorf(format, args...) }
	known := false
	for _, op := range Operations {
		known = known || r.Operation == op
	}
	if !known {
		return bad("unknown ui operation %q: expected %s", r.Operation, strings.Join(Operations, ", "))
	}
	sel := r.Selector.Normalize()
	switch r.Detail {
	case "", DetailCompact, DetailFull:
	default:
		return bad("detail must be compact or full")
	}
	if r.Operation != OpSnapshot && r.Operation != OpBack && !sel.HasCriteria() && (sel.Index != nil || sel.Contains || sel.CaseSensitive) {
		return bad("index, contains and case-sensitive require an automation-id, text, role or ancestor selector")
	}
	if sel.Index != nil && *sel.Index < 0 {
		return bad("index must be 0 or more")
	}
	between := func(name string, v, lo, hi float64) error {
		if math.IsNaN(v) || v < lo || v > hi {
			return bad("%s must be a number between %g and %g", name, lo, hi)
		}
		return nil
	}
	ints := []struct {
		name   string
		v      int
		lo, hi int
	}{
		{"max-nodes", r.MaxNodes, 1, 2000}, {"max-depth", r.MaxDepth, 1, 64}, {"limit", r.Limit, 1, 1000},
		{"poll-ms", r.PollMs, 100, 5000}, {"stable-samples", r.StableSamples, 2, 20}, {"duration-ms", r.DurationMs, 50, 2000},
	}
	for _, c := range ints {
		if c.v != 0 && (c.v < c.lo || c.v > c.hi) {
			return bad("%s must be between %d and %d", c.name, c.lo, c.hi)
		}
	}
	if r.TimeoutMs != nil {
		lo := 0
		if r.Operation == OpWait {
			lo = 100
		}
		if *r.TimeoutMs < lo || *r.TimeoutMs > MaxTimeoutMs {
			return bad("timeout-ms must be between %d and %d", lo, MaxTimeoutMs)
		}
	}
	needSelector := func() error {
		if sel.AutomationID == "" && sel.Text == "" && sel.Role == "" && sel.Ancestor == "" && sel.NodeID == "" && sel.Type == "" {
			return bad("ansight ui %s requires at least one selector: --automation-id, --text, --role, or --ancestor", r.Operation)
		}
		return nil
	}
	if (r.X == nil) != (r.Y == nil) {
		return bad("x and y must be supplied together")
	}
	if r.X != nil {
		if r.Operation != OpTap {
			return bad("x and y place a tap only")
		}
		if sel.HasCriteria() {
			return bad("use either a selector or coordinates, not both")
		}
		for _, p := range []*float64{r.X, r.Y} {
			if err := between("x and y", *p, 0, 1); err != nil {
				return err
			}
		}
		return nil
	}
	switch r.Operation {
	case OpFind, OpTap:
		return needSelector()
	case OpAssert:
		if err := needSelector(); err != nil {
			return err
		}
		return r.validateAssert()
	case OpAct:
		if strings.TrimSpace(r.Action) == "" {
			return bad("act requires an action")
		}
		if len(r.ActionValue) > 0 && !r.ActionValue.IsValid() || len(r.ActionOptions) > 0 && (!r.ActionOptions.IsValid() || r.ActionOptions.Kind() != '{') {
			return bad("actionValue must be JSON and actionOptions a JSON object")
		}
		return needSelector()
	case OpType:
		if r.Value == nil {
			return bad("ansight ui type requires --value")
		}
		if r.Focused && !sel.HasCriteria() {
			return nil
		}
		return needSelector()
	case OpWait:
		switch r.Condition {
		case "", ConditionVisible, ConditionHidden:
			return needSelector()
		case ConditionStable:
		default:
			return bad("condition must be visible, hidden, or stable")
		}
	case OpSwipe:
		if r.Orientation != "" && r.Direction != "" {
			return bad("use orientation or direction, not both")
		}
		switch r.Direction {
		case "", "up", "down", "left", "right":
		default:
			return bad("direction must be up, down, left or right")
		}
		if r.Orientation != "" {
			if _, err := parseOrientation(r.Orientation); err != nil {
				return err
			}
		}
		coords := 0
		for _, p := range []*float64{r.StartX, r.StartY, r.EndX, r.EndY} {
			if p != nil {
				coords++
				if err := between("start-x, start-y, end-x and end-y", *p, 0, 1); err != nil {
					return err
				}
			}
		}
		if coords > 0 && coords < 4 {
			return bad("start-x, start-y, end-x and end-y must be supplied together")
		}
		if coords == 4 && (r.Orientation != "" || r.Direction != "" || r.Length != 0) {
			return bad("exact swipe coordinates cannot be combined with orientation, direction or length")
		}
		if r.Length != 0 {
			return between("length", r.Length, 0.05, 0.9)
		}
	case OpPinch:
		if err := between("scale", r.Scale, 0.1, 4); err != nil {
			return err
		}
		if (r.CenterX == nil) != (r.CenterY == nil) {
			return bad("center-x and center-y must be supplied together")
		}
		for _, p := range []*float64{r.CenterX, r.CenterY} {
			if p != nil {
				if err := between("center-x and center-y", *p, 0, 1); err != nil {
					return err
				}
			}
		}
		if r.StartDistance != 0 {
			return between("start-distance", r.StartDistance, 0.05, 0.8)
		}
	}
	return nil
}

// validateAssert refuses an assertion's contradictory expectations, as the official CLI
// does.
func (r *Request) validateAssert() error {
	exists := r.Exists
	if r.Count != nil && *r.Count < 0 {
		return errors.New("count must be 0 or more")
	}
	if exists != nil && r.Count != nil && *exists != (*r.Count > 0) {
		return errors.New("exists and count describe contradictory expectations")
	}
	selected := r.ExpectedText != nil || r.ExpectedValue != nil || r.ExpectedVisible != nil || r.ExpectedEnabled != nil
	if selected && (exists != nil && !*exists || r.Count != nil && *r.Count == 0) {
		return errors.New("selected-node assertions cannot be combined with exists false or count 0")
	}
	return nil
}

// orientation is a swipe's direction as a unit vector in screen coordinates (y down).
type orientation struct{ dx, dy float64 }

// compass are the unit vectors of the compass points, y growing down the screen.
var compass = map[string]orientation{
	"N": {0, -1}, "S": {0, 1}, "E": {1, 0}, "W": {-1, 0},
	"NE": {math.Sqrt2 / 2, -math.Sqrt2 / 2}, "NW": {-math.Sqrt2 / 2, -math.Sqrt2 / 2},
	"SE": {math.Sqrt2 / 2, math.Sqrt2 / 2}, "SW": {-math.Sqrt2 / 2, math.Sqrt2 / 2},
}

// parseOrientation reads a compass path: "N" or "SW" (toward that point), or "E-to-W"
// (from one point toward another).
func parseOrientation(s string) (orientation, error) {
	p := strings.ToUpper(strings.TrimSpace(s))
	if from, to, ok := strings.Cut(p, "-TO-"); ok {
		a, okA := compass[from]
		b, okB := compass[to]
		if okA && okB {
			dx, dy := b.dx-a.dx, b.dy-a.dy
			if l := math.Hypot(dx, dy); l > 0 {
				return orientation{dx / l, dy / l}, nil
			}
		}
	} else if o, ok := compass[p]; ok {
		return o, nil
	}
	return orientation{}, fmt.Errorf("orientation %q is not a compass path (N, SW, E-to-W, …)", s)
}

// direction names a vector's dominant axis (the value ui.perform_action's scroll takes).
func (o orientation) direction() string {
	if math.Abs(o.dx) > math.Abs(o.dy) {
		if o.dx > 0 {
			return "right"
		}
		return "left"
	}
	if o.dy > 0 {
		return "down"
	}
	return "up"
}
