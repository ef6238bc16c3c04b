package cli

import (
	"bytes"
	"cmp"
	"context"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/uiauto"
)

// uiOptions are the flags of ansight ui's verbs: the official CLI's, and ours beside them.
type uiOptions struct {
	session, sessionID, app, appID string
	detail                         string
	silent, verbose                bool
	timeout                        time.Duration // each call's deadline (--timeout)

	// Selector.
	automationID, text, role, ancestor string
	index                              int
	contains, caseSensitive            bool

	// snapshot
	maxNodes, maxDepth               int
	includeProperties, includeBounds string
	limit                            int
	value                            string
	appendText                       bool
	condition                        string
	timeoutMs, pollMs, stableSamples int
	exists, expectedVisible          string
	expectedEnabled                  string
	count                            int
	absent                           bool
	expectedText, expectedValue      string
	direction, orientation           string
	length                           float64
	durationMs                       int
	startX, startY, endX, endY       float64
	scale, centerX, centerY          float64
	startDistance, angleDegrees      float64
	flags                            *pflag.FlagSet
	operation                        string
	selectorVerb, actionVerb         bool
}

// uiVerbs are the verbs, their one-line help and examples.
var uiVerbs = []struct{ verb, short, example string }{
	{uiauto.OpSnapshot, "Capture the screen's tree (compact projection, or --detail full)", "  ansight ui snapshot --app-id com.ansight.demo.notes\n  ansight ui snapshot --max-nodes 50 --json"},
	{uiauto.OpFind, "Find nodes (substring, case-insensitive); nearest candidates when none match", `  ansight ui find --text note --role button`},
	{uiauto.OpTap, "Tap a node (waits up to --timeout-ms for it to become actionable)", "  ansight ui tap --automation-id addNoteButton\n  ansight ui tap --text Groceries --role listitem"},
	{uiauto.OpType, "Type into a field (replaces its text unless --append)", `  ansight ui type --automation-id titleField --value "Shopping"`},
	{uiauto.OpSwipe, "Swipe a node that scrolls (its ui.perform_action scroll)", "  ansight ui swipe --automation-id notesList --direction up\n  ansight ui swipe --start-x 0.5 --start-y 0.7 --end-x 0.5 --end-y 0.3"},
	{uiauto.OpPinch, "Pinch a node that supports pinch", `  ansight ui pinch --automation-id map --scale 1.8`},
	{uiauto.OpBack, "Tap the node the app marks as navigating back", `  ansight ui back`},
	{uiauto.OpWait, "Wait until a node is visible or hidden, or the screen is stable", "  ansight ui wait --automation-id syncedOkButton --timeout-ms 5000\n  ansight ui wait --condition stable"},
	{uiauto.OpAssert, "Check what the screen shows: exists, count, text, value, state", "  ansight ui assert --automation-id saveButton --expected-enabled false\n  ansight ui assert --text Ghost --absent"},
}

func newUICmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Drive an app's screen: snapshot, find, tap, type, swipe, pinch, back, wait, assert",
		Long: `Drive a connected app's screen through its standard UI tools.

Every verb captures the screen with ui.get_visual_tree, resolves the selector on the host
with the official semantics (exact, case-insensitive matching unless --contains or
--case-sensitive; every criterion must hold; action-ready nodes first, then --index) and
acts with the app's own ui.perform_action on that capture's snapshot and node: desktop and
Go apps too, no simulator. Actions wait up to --timeout-ms (default 5000) for their target
to become actionable and resolve a stale reference once; find and assert name the nearest
candidates when nothing matches.

--json writes ansight.ui-operation/v1. Exit: 0 success, 1 the operation failed (no match,
not actionable, an assertion, the app's refusal), 2 usage; the host's own failures keep
their codes (4 no host, 7 no session).`,
	}
	for _, v := range uiVerbs {
		cmd.AddCommand(newUIVerbCmd(g, v.verb, v.short, v.example))
	}
	return cmd
}

func newUIVerbCmd(g *globals, verb, short, example string) *cobra.Command {
	o := &uiOptions{operation: verb}
	o.selectorVerb = verb != uiauto.OpSnapshot && verb != uiauto.OpBack
	o.actionVerb = verb == uiauto.OpTap || verb == uiauto.OpType || verb == uiauto.OpSwipe || verb == uiauto.OpPinch || verb == uiauto.OpBack
	cmd := &cobra.Command{
		Use:     verb,
		Short:   short,
		Example: example,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runUI(c.Context(), g, o)
		},
	}
	f := cmd.Flags()
	o.flags = f
	f.StringVar(&o.session, "session", "", "the session to drive")
	f.StringVar(&o.sessionID, "session-id", "", "same as --session")
	f.StringVar(&o.app, "app", "", "drive the session of this app (when exactly one is connected)")
	f.StringVar(&o.appID, "app-id", "", "same as --app")
	f.StringVar(&o.detail, "detail", uiauto.DetailCompact, "compact (the host's projection) or full (the app's tree as it came)")
	f.BoolVar(&o.silent, "silent", false, "write nothing; the exit code says how it went")
	f.BoolVar(&o.verbose, "verbose", false, "also write the attempts and the wait to standard error")
	f.DurationVar(&o.timeout, "timeout", 0, "how long each call to the app may take (default 20s, at most 1h)")
	o.verbFlags(f)
	return cmd
}

// verbFlags adds the flags of o's verb: the selector's, the verb's own, an action's wait.
func (o *uiOptions) verbFlags(f *pflag.FlagSet) {
	if o.selectorVerb {
		f.StringVar(&o.automationID, "automation-id", "", "the node's automation (accessibility) id")
		f.StringVar(&o.text, "text", "", "the node's text (its label, else what it displays)")
		f.StringVar(&o.role, "role", "", "the node's role: button, textbox, switch, …")
		f.StringVar(&o.ancestor, "ancestor", "", "an ancestor's automation id")
		f.IntVar(&o.index, "index", 0, "pick this match (0-based) when the selector is not unique")
		f.BoolVar(&o.contains, "contains", false, "match substrings rather than whole strings")
		f.BoolVar(&o.caseSensitive, "case-sensitive", false, "match case-sensitively")
	}
	switch o.operation {
	case uiauto.OpSnapshot:
		o.snapshotFlags(f)
	case uiauto.OpFind:
		o.findFlags(f)
	case uiauto.OpType:
		o.typeFlags(f)
	case uiauto.OpSwipe:
		o.swipeFlags(f)
	case uiauto.OpPinch:
		o.pinchFlags(f)
	case uiauto.OpWait:
		o.waitFlags(f)
	case uiauto.OpAssert:
		o.assertFlags(f)
	}
	if o.actionVerb {
		f.IntVar(&o.timeoutMs, "timeout-ms", uiauto.DefaultActionTimeout, "wait this long for the target to become actionable (0-60000; 0: one attempt)")
		f.IntVar(&o.pollMs, "poll-ms", uiauto.DefaultActionPollMs, "time between captures while waiting (100-5000)")
	}
}

// snapshotFlags adds ui snapshot's own flags.
func (o *uiOptions) snapshotFlags(f *pflag.FlagSet) {
	f.IntVar(&o.maxNodes, "max-nodes", uiauto.DefaultMaxNodes, "at most this many nodes (1-2000)")
	f.IntVar(&o.maxDepth, "max-depth", uiauto.DefaultMaxDepth, "at most this many levels (1-64)")
	f.StringVar(&o.includeProperties, "include-properties", "", "true: include the nodes' properties (implies --detail full unless --detail compact)")
	f.StringVar(&o.includeBounds, "include-bounds", "", "false: leave the bounds out (default true)")
}

// findFlags adds ui find's own flags.
func (o *uiOptions) findFlags(f *pflag.FlagSet) {
	f.IntVar(&o.limit, "limit", uiauto.DefaultLimit, "at most this many matches (1-1000)")
}

// typeFlags adds ui type's own flags.
func (o *uiOptions) typeFlags(f *pflag.FlagSet) {
	f.StringVar(&o.value, "value", "", "the text to type (required)")
	f.BoolVar(&o.appendText, "append", false, "add to the field's text instead of replacing it")
}

// swipeFlags adds ui swipe's own flags.
func (o *uiOptions) swipeFlags(f *pflag.FlagSet) {
	f.StringVar(&o.direction, "direction", "", "up, down, left or right (default up: reveals what is below)")
	f.StringVar(&o.orientation, "orientation", "", "a compass path instead: N, SW, E-to-W, …")
	f.Float64Var(&o.length, "length", uiauto.DefaultSwipeLength, "the swipe's length, 0.05-0.9 of the screen")
	f.IntVar(&o.durationMs, "duration-ms", uiauto.DefaultSwipeDuration, "the gesture's duration (50-2000)")
	f.Float64Var(&o.startX, "start-x", 0, "exact start x, 0-1 (with --start-y, --end-x, --end-y; the node there is hit-tested)")
	f.Float64Var(&o.startY, "start-y", 0, "exact start y, 0-1")
	f.Float64Var(&o.endX, "end-x", 0, "exact end x, 0-1")
	f.Float64Var(&o.endY, "end-y", 0, "exact end y, 0-1")
}

// pinchFlags adds ui pinch's own flags.
func (o *uiOptions) pinchFlags(f *pflag.FlagSet) {
	f.Float64Var(&o.scale, "scale", 0, "the pinch's scale, 0.1-4 (below 1 pinches in; required)")
	f.Float64Var(&o.centerX, "center-x", 0, "the centre's x, 0-1 (with --center-y; the node there is hit-tested)")
	f.Float64Var(&o.centerY, "center-y", 0, "the centre's y, 0-1")
	f.Float64Var(&o.startDistance, "start-distance", uiauto.DefaultPinchDistance, "the contacts' starting distance, 0.05-0.8")
	f.Float64Var(&o.angleDegrees, "angle-degrees", 0, "the contacts' axis")
	f.IntVar(&o.durationMs, "duration-ms", uiauto.DefaultPinchDuration, "the gesture's duration (50-2000)")
}

// waitFlags adds ui wait's own flags.
func (o *uiOptions) waitFlags(f *pflag.FlagSet) {
	f.StringVar(&o.condition, "condition", uiauto.ConditionVisible, "visible, hidden or stable (stable needs no selector)")
	f.IntVar(&o.timeoutMs, "timeout-ms", uiauto.DefaultWaitTimeoutMs, "give up after this long (100-60000)")
	f.IntVar(&o.pollMs, "poll-ms", uiauto.DefaultPollMs, "time between captures (100-5000)")
	f.IntVar(&o.stableSamples, "stable-samples", uiauto.DefaultStableSamples, "equal consecutive trees a stable wait needs (2-20)")
}

// assertFlags adds ui assert's own flags.
func (o *uiOptions) assertFlags(f *pflag.FlagSet) {
	f.BoolVar(&o.absent, "absent", false, "assert that no node matches")
	f.StringVar(&o.exists, "exists", "", "true or false: whether a node matches")
	f.IntVar(&o.count, "count", 0, "the exact number of matches")
	f.StringVar(&o.expectedText, "expected-text", "", "the selected node's text (exact, case-sensitive)")
	f.StringVar(&o.expectedValue, "expected-value", "", "the selected node's value (exact, case-sensitive)")
	f.StringVar(&o.expectedVisible, "expected-visible", "", "true or false: the selected node's visibility")
	f.StringVar(&o.expectedEnabled, "expected-enabled", "", "true or false: the selected node's enabled state")
}

// set reports whether a flag was given.
func (o *uiOptions) set(name string) bool {
	f := o.flags.Lookup(name)
	return f != nil && f.Changed
}

// boolFlag reads a true|false flag's value (nil when not given).
func (o *uiOptions) boolFlag(name, value string) (*bool, error) {
	if !o.set(name) {
		return nil, nil
	}
	switch {
	case strings.EqualFold(value, "true"):
		b := true
		return &b, nil
	case strings.EqualFold(value, "false"):
		b := false
		return &b, nil
	}
	return nil, usageErrorf("--%s must be true or false", name)
}

// request builds the operation's request from the flags, checking them as the official
// CLI does.
func (o *uiOptions) request() (*hostapi.UIRequest, error) {
	if err := o.checkTarget(); err != nil {
		return nil, err
	}
	req := &hostapi.UIRequest{Request: uiauto.Request{Operation: o.operation}}
	r := &req.Request
	callTimeout, err := timeoutMS(o.timeout)
	if err != nil {
		return nil, err
	}
	req.CallTimeoutMS = callTimeout
	if o.set("detail") || o.operation == uiauto.OpSnapshot {
		r.Detail = o.detail
	}
	if o.selectorVerb {
		if err := o.readSelector(r); err != nil {
			return nil, err
		}
	}
	switch o.operation {
	case uiauto.OpSnapshot:
		err = o.snapshotRequest(r)
	case uiauto.OpFind:
		o.intFlag("limit", o.limit, &r.Limit)
	case uiauto.OpType:
		err = o.typeRequest(r)
	case uiauto.OpSwipe:
		err = o.swipeRequest(r)
	case uiauto.OpPinch:
		err = o.pinchRequest(r)
	case uiauto.OpWait:
		err = o.waitRequest(r)
	case uiauto.OpAssert:
		err = o.assertRequest(r)
	}
	if err != nil {
		return nil, err
	}
	if o.set("timeout-ms") {
		r.TimeoutMs = &o.timeoutMs
	}
	if o.actionVerb {
		o.intFlag("poll-ms", o.pollMs, &r.PollMs)
	}
	if err := r.Validate(); err != nil {
		return nil, usageErrorf("%s", fixFlagNames(err.Error()))
	}
	return req, nil
}

// checkTarget refuses a session target given twice, or beside an app target, and an
// unknown --detail.
func (o *uiOptions) checkTarget() error {
	if o.set("session") && o.set("session-id") {
		return usageErrorf("use only one of --session or --session-id")
	}
	if o.set("app") && o.set("app-id") {
		return usageErrorf("use only one of --app or --app-id")
	}
	if (o.session != "" || o.sessionID != "") && (o.app != "" || o.appID != "") {
		return usageErrorf("use a session target or an app target, not both")
	}
	if o.detail != uiauto.DetailCompact && o.detail != uiauto.DetailFull {
		return usageErrorf("--detail must be compact or full")
	}
	return nil
}

// readSelector reads the selector's flags into r.
func (o *uiOptions) readSelector(r *uiauto.Request) error {
	r.Selector.AutomationID, r.Selector.Text, r.Selector.Role, r.Selector.Ancestor = o.automationID, o.text, o.role, o.ancestor
	hasCriteria := strings.TrimSpace(o.automationID+o.text+o.role+o.ancestor) != ""
	if !hasCriteria && (o.set("index") || o.contains || o.caseSensitive) {
		return usageErrorf("--index, --contains, and --case-sensitive require an automation-id, text, role, or ancestor selector")
	}
	if o.set("index") {
		if o.index < 0 {
			return usageErrorf("--index must be 0 or more")
		}
		r.Selector.Index = &o.index
	}
	r.Selector.Contains, r.Selector.CaseSensitive = o.contains, o.caseSensitive
	return nil
}

// intFlag sets *dst to v when the flag name was given. A request's zero means "the
// default", and a flag given as 0 is outside every range these flags have, so it goes on
// as -1, for Validate to refuse with the range.
func (o *uiOptions) intFlag(name string, v int, dst *int) {
	if o.set(name) {
		*dst = cmp.Or(v, -1)
	}
}

// floatFlag is intFlag's float form.
func (o *uiOptions) floatFlag(name string, v float64, dst *float64) {
	if o.set(name) {
		*dst = cmp.Or(v, -1)
	}
}

// snapshotRequest reads ui snapshot's flags into r.
func (o *uiOptions) snapshotRequest(r *uiauto.Request) error {
	o.intFlag("max-nodes", o.maxNodes, &r.MaxNodes)
	o.intFlag("max-depth", o.maxDepth, &r.MaxDepth)
	props, err := o.boolFlag("include-properties", o.includeProperties)
	if err != nil {
		return err
	}
	if props != nil && *props {
		r.IncludeProperties = true
		if !o.set("detail") {
			r.Detail = uiauto.DetailFull
		}
	}
	if r.IncludeBounds, err = o.boolFlag("include-bounds", o.includeBounds); err != nil {
		return err
	}
	return nil
}

// typeRequest reads ui type's flags into r.
func (o *uiOptions) typeRequest(r *uiauto.Request) error {
	if !o.set("value") {
		return usageErrorf("ansight ui type requires --value")
	}
	r.Value, r.Append = &o.value, o.appendText
	return nil
}

// swipeRequest reads ui swipe's flags into r.
func (o *uiOptions) swipeRequest(r *uiauto.Request) error {
	r.Direction, r.Orientation = o.direction, o.orientation
	o.floatFlag("length", o.length, &r.Length)
	o.intFlag("duration-ms", o.durationMs, &r.DurationMs)
	for _, p := range []struct {
		name string
		v    float64
		dst  **float64
	}{{"start-x", o.startX, &r.StartX}, {"start-y", o.startY, &r.StartY}, {"end-x", o.endX, &r.EndX}, {"end-y", o.endY, &r.EndY}} {
		if o.set(p.name) {
			v := p.v
			*p.dst = &v
		}
	}
	return nil
}

// pinchRequest reads ui pinch's flags into r.
func (o *uiOptions) pinchRequest(r *uiauto.Request) error {
	if !o.set("scale") {
		return usageErrorf("ansight ui pinch requires --scale")
	}
	o.floatFlag("scale", o.scale, &r.Scale)
	if o.set("center-x") {
		r.CenterX = &o.centerX
	}
	if o.set("center-y") {
		r.CenterY = &o.centerY
	}
	o.floatFlag("start-distance", o.startDistance, &r.StartDistance)
	r.AngleDegrees = o.angleDegrees
	o.intFlag("duration-ms", o.durationMs, &r.DurationMs)
	return nil
}

// waitRequest reads ui wait's flags into r.
func (o *uiOptions) waitRequest(r *uiauto.Request) error {
	r.Condition = strings.ToLower(o.condition)
	o.intFlag("poll-ms", o.pollMs, &r.PollMs)
	o.intFlag("stable-samples", o.stableSamples, &r.StableSamples)
	return nil
}

// assertRequest reads ui assert's flags: what to check, --absent as exists false into r.
func (o *uiOptions) assertRequest(r *uiauto.Request) error {
	var err error
	if r.Exists, err = o.boolFlag("exists", o.exists); err != nil {
		return err
	}
	if o.set("count") {
		if o.count < 0 {
			return usageErrorf("--count must be 0 or more")
		}
		r.Count = &o.count
	}
	if o.set("expected-text") {
		r.ExpectedText = &o.expectedText
	}
	if o.set("expected-value") {
		r.ExpectedValue = &o.expectedValue
	}
	if r.ExpectedVisible, err = o.boolFlag("expected-visible", o.expectedVisible); err != nil {
		return err
	}
	if r.ExpectedEnabled, err = o.boolFlag("expected-enabled", o.expectedEnabled); err != nil {
		return err
	}
	if o.absent {
		switch {
		case r.Exists != nil:
			return usageErrorf("--absent cannot be combined with --exists")
		case r.ExpectedText != nil || r.ExpectedValue != nil || r.ExpectedVisible != nil || r.ExpectedEnabled != nil:
			return usageErrorf("--absent cannot be combined with assertions on a selected node")
		case r.Count != nil && *r.Count != 0:
			return usageErrorf("--absent can only be combined with --count 0")
		}
		no := false
		r.Exists = &no
	}
	return nil
}

// fixFlagNames writes the request's option names, wherever a message names them, as the
// flags that set them.
func fixFlagNames(msg string) string {
	return optionName.ReplaceAllString(msg, "${1}--$2")
}

// optionName matches the name of one of a request's options as a word of a message.
var optionName = regexp.MustCompile(`(^|[^-\w])(max-nodes|max-depth|limit|poll-ms|stable-samples|duration-ms|timeout-ms|` +
	`length|scale|start-distance|index|contains|case-sensitive|count|exists|condition|direction|orientation|detail|` +
	`start-x|start-y|end-x|end-y|center-x|center-y)\b`)

// uiSelector is the session the flags name (--session, else --app).
func (o *uiOptions) selector() (sessionSelector, []string) {
	id := o.session + o.sessionID
	if id != "" {
		return sessionSelector{}, []string{id}
	}
	return sessionSelector{appID: o.app + o.appID}, nil
}

// uiOutput is ansight.ui-operation/v1 as the official CLI writes it.
type uiOutput struct {
	Schema    string         `json:"schema"`
	Operation string         `json:"operation"`
	Succeeded bool           `json:"succeeded"`
	Message   string         `json:"message"`
	Code      string         `json:"code,omitzero"`
	SessionID string         `json:"sessionId"`
	Result    *uiauto.Result `json:"result"`
}

func runUI(ctx context.Context, g *globals, o *uiOptions) error {
	req, err := o.request()
	if err != nil {
		return err
	}
	sel, args := o.selector()
	b, id, err := g.session(ctx, &sel, args)
	if err != nil {
		return err
	}
	op, err := b.UI(ctx, id, *req)
	if err != nil {
		return hostErr(err)
	}
	out := uiOutput{Schema: op.Schema, Operation: op.Operation, Succeeded: op.Succeeded, Message: op.Message,
		Code: string(op.Code), SessionID: op.SessionID, Result: op.Result}
	switch {
	case o.silent:
	case g.json:
		if err := writeJSON(g.env.Stdout, out); err != nil {
			return err
		}
	case op.Succeeded:
		// The message; the tree and the matches as JSON, as the official CLI writes them.
		printf(g.env.Stdout, "%s\n", termText(op.Message))
		if o.operation == uiauto.OpSnapshot || o.operation == uiauto.OpFind || o.verbose {
			printUIResult(g.env.Stdout, op.Result)
		}
	default:
		printf(g.env.Stderr, "ansight: %s\n", termText(op.Message))
		if op.Result != nil {
			// The message names the nearest candidate; the others follow.
			for _, c := range op.Result.Nearest[min(1, len(op.Result.Nearest)):] {
				printf(g.env.Stderr, "  also near: %s\n", termText(c.String()))
			}
			if r := op.Result; r.Selector != nil && r.MatchCount != nil && *r.MatchCount == 0 && len(r.Nearest) == 0 {
				printf(g.env.Stderr, "hint: nothing on the screen is close; '%s' shows what it holds\n", g.command("ui snapshot"))
			}
		}
		if o.verbose {
			printUIResult(g.env.Stderr, op.Result)
		}
	}
	if o.verbose && op.Result != nil && o.actionVerb {
		printf(g.env.Stderr, "%d capture(s), waited %d ms, stale reference resolved again: %t\n", op.Result.Attempts, op.Result.WaitedMs, op.Result.Reresolved)
	}
	if !op.Succeeded {
		return &exitError{code: ExitFailure, err: silentError{}}
	}
	return nil
}

// printUIResult writes a result as indented JSON, the app's strings made safe for a
// terminal.
func printUIResult(w io.Writer, res *uiauto.Result) {
	if res == nil {
		return
	}
	b, err := json.Marshal(res, json.Deterministic(true), jsontext.Multiline(true), jsontext.WithIndent("  "))
	if err != nil {
		return
	}
	var out bytes.Buffer
	for _, l := range bytes.Split(b, []byte("\n")) {
		out.WriteString(termText(string(l)))
		out.WriteByte('\n')
	}
	_, _ = w.Write(out.Bytes())
}
