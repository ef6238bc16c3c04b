package flow

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ansight-go/ansight/internal/editdist"
)

// decoder reads a flow file's tree strictly into a Flow: every key must be one the format
// names for that place, every value of the type it takes; mistakes are collected with their
// positions (up to maxErrors) rather than stopping at the first.
type decoder struct {
	file string
	errs ErrorList
	// step names the step being read, for the errors inside it.
	step string
}

func (d *decoder) fail(pos Pos, format string, args ...any) {
	if len(d.errs) >= maxErrors {
		return
	}
	e := errorf(pos, format, args...)
	e.Step = d.step
	d.errs = append(d.errs, e)
}

func (d *decoder) failErr(err error) {
	for _, e := range Errors(err) {
		if len(d.errs) >= maxErrors {
			return
		}
		if e.Step == "" {
			e.Step = d.step
		}
		d.errs = append(d.errs, e)
	}
}

// object checks that v is an object whose keys are all among allowed; what names the place
// ("a call step"). It reports each unknown key with the nearest allowed one.
func (d *decoder) object(v *value, what string, allowed ...string) bool {
	if v.kind != kindObject {
		d.fail(v.pos, "%s must be an object (a mapping), not %s", what, v.kind)
		return false
	}
	for _, n := range v.names {
		if slices.Contains(allowed, n.text) {
			continue
		}
		msg := fmt.Sprintf("unknown key %q in %s", n.text, what)
		if near := nearest(n.text, allowed); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		d.fail(n.pos, "%s; it takes %s", msg, strings.Join(allowed, ", "))
	}
	return true
}

// nearest returns the allowed name closest to s (a typo: at most two edits, or the same
// letters in another case), or "".
func nearest(s string, allowed []string) string {
	best, bestDist := "", 3
	for _, a := range allowed {
		if strings.EqualFold(a, s) {
			return a
		}
		if dist := editDistance(strings.ToLower(s), strings.ToLower(a)); dist < bestDist {
			best, bestDist = a, dist
		}
	}
	return best
}

// editDistance is the edit distance of two keys; a long one is never near (the cost grows
// with the product of the lengths, and a 64-byte key is no typo of a schema's key).
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 10
	}
	return editdist.Distance(a, b)
}

// str reads a string that is used as written: a "${" in it is a mistake, since nothing
// expands there.
func (d *decoder) str(v *value, what string) (string, bool) {
	if v.kind != kindString {
		d.fail(v.pos, "%s must be a string, not %s", what, v.kind)
		return "", false
	}
	if strings.Contains(v.text, "${") {
		d.fail(v.pos, "%s: variables are not expanded here (write $${ for a literal ${)", what)
		return "", false
	}
	return v.text, true
}

// nonEmpty reads a string that must not be empty.
func (d *decoder) nonEmpty(v *value, what string) (string, bool) {
	s, ok := d.str(v, what)
	if ok && strings.TrimSpace(s) == "" {
		d.fail(v.pos, "%s must not be empty", what)
		return "", false
	}
	return s, ok
}

// tmplString reads a string in which variables expand.
func (d *decoder) tmplString(v *value, what string) *value {
	if v.kind != kindString {
		d.fail(v.pos, "%s must be a string, not %s", what, v.kind)
		return nil
	}
	if err := markTemplates(v); err != nil {
		d.failErr(err)
		return nil
	}
	return v
}

// tmplValue reads any JSON value in whose strings variables expand.
func (d *decoder) tmplValue(v *value) *value {
	if err := markTemplates(v); err != nil {
		d.failErr(err)
		return nil
	}
	return v
}

func (d *decoder) boolean(v *value, what string) (bool, bool) {
	if v.kind != kindBool {
		d.fail(v.pos, "%s must be true or false, not %s", what, v.kind)
		return false, false
	}
	return v.text == "true", true
}

// integer reads a whole number in [lo, hi].
func (d *decoder) integer(v *value, what string, lo, hi int) (int, bool) {
	if v.kind != kindNumber {
		d.fail(v.pos, "%s must be a whole number, not %s", what, v.kind)
		return 0, false
	}
	var n int
	if _, err := fmt.Sscanf(v.text, "%d", &n); err != nil || fmt.Sprint(n) != strings.TrimPrefix(v.text, "+") {
		d.fail(v.pos, "%s must be a whole number, not %s", what, v.text)
		return 0, false
	}
	if n < lo || n > hi {
		d.fail(v.pos, "%s must be from %d to %d, not %d", what, lo, hi, n)
		return 0, false
	}
	return n, true
}

// duration reads a Go duration string ("500ms", "5s", "1m30s") in [lo, hi].
func (d *decoder) duration(v *value, what string, lo, hi time.Duration) (time.Duration, bool) {
	if v.kind != kindString {
		d.fail(v.pos, "%s must be a duration like \"5s\" or \"500ms\", not %s", what, v.kind)
		return 0, false
	}
	t, err := time.ParseDuration(v.text)
	if err != nil {
		d.fail(v.pos, "%s: %q is not a duration (write it like \"5s\", \"500ms\" or \"1m30s\")", what, v.text)
		return 0, false
	}
	if t < lo || t > hi {
		d.fail(v.pos, "%s must be from %v to %v, not %v", what, lo, hi, t)
		return 0, false
	}
	return t, true
}

// The keys of a flow and of each kind of step.
var (
	flowKeys   = []string{"schema", "name", "description", "appId", "timeout", "teardownTimeout", "vars", "setup", "steps", "teardown"}
	commonKeys = []string{"name", "timeout", "retry"}
	resultKeys = []string{"save", "expect", "expectError"}
	stepKeys   = map[StepKind][]string{
		KindCall:       append(append([]string{"call", "arguments"}, commonKeys...), resultKeys...),
		KindBatch:      append(append([]string{"batch", "continueOnError"}, commonKeys...), resultKeys...),
		KindScreenshot: append([]string{"screenshot"}, commonKeys...),
		KindInclude:    {"include", "name"},
	}
	selectorKeys = []string{"automationId", "text", "role", "ancestor", "index", "contains", "caseSensitive"}
	uiKeys       = map[StepKind][]string{
		KindTap:    append([]string{"timeout"}, selectorKeys...),
		KindType:   append([]string{"value", "append", "timeout"}, selectorKeys...),
		KindSwipe:  append([]string{"direction", "timeout"}, selectorKeys...),
		KindBack:   {"timeout"},
		KindWait:   append([]string{"condition", "timeout", "poll", "stableSamples"}, selectorKeys...),
		KindAssert: append([]string{"exists", "count", "absent", "expectedText", "expectedValue", "expectedVisible", "expectedEnabled"}, selectorKeys...),
	}
)

func init() {
	for k := range uiKeys {
		stepKeys[k] = append(append([]string{string(k)}, commonKeys...), resultKeys...)
	}
}

// decodeFlow reads a flow file's tree. Includes are left to the loader (Step.Include).
func decodeFlow(file string, root *value) (*Flow, error) {
	d := &decoder{file: file}
	f := &Flow{File: file, Timeout: DefaultTimeout, TeardownTimeout: DefaultTeardownTimeout}
	if !d.object(root, "a flow", flowKeys...) {
		return nil, d.errs
	}
	sv := root.get("schema")
	switch {
	case sv == nil:
		d.fail(root.pos, "a flow begins with schema: %s", Schema)
	case sv.kind != kindString || sv.text != Schema:
		d.fail(sv.pos, "schema must be %q, not %s", Schema, sv.short(60))
	}
	for i, n := range root.names {
		v := root.elems[i]
		switch n.text {
		case "name":
			f.Name, _ = d.nonEmpty(v, "name")
		case "description":
			f.Description, _ = d.str(v, "description")
		case "appId":
			f.AppID, _ = d.nonEmpty(v, "appId")
		case "timeout":
			f.Timeout, _ = d.duration(v, "timeout", time.Millisecond, MaxTimeout)
		case "teardownTimeout":
			f.TeardownTimeout, _ = d.duration(v, "teardownTimeout", time.Millisecond, MaxStepTimeout)
		case "vars":
			f.Vars = d.vars(v)
		case "setup":
			f.Setup = d.steps(v, "setup")
		case "steps":
			f.Steps = d.steps(v, "steps")
		case "teardown":
			f.Teardown = d.steps(v, "teardown")
		}
	}
	if root.get("steps") == nil {
		d.fail(root.pos, "a flow needs steps:")
	} else if len(f.Steps) == 0 && len(d.errs) == 0 {
		d.fail(root.get("steps").pos, "steps: is empty")
	}
	if len(d.errs) > 0 {
		return nil, d.errs
	}
	return f, nil
}

func (d *decoder) vars(v *value) map[string]string {
	if v.kind != kindObject {
		d.fail(v.pos, "vars must be an object of NAME: value, not %s", v.kind)
		return nil
	}
	out := make(map[string]string, len(v.names))
	for i, n := range v.names {
		if !isName(n.text) {
			d.fail(n.pos, "vars: %q is not a name (letters, digits, '_' and '-')", n.text)
			continue
		}
		if s, ok := d.str(v.elems[i], "vars."+n.text); ok {
			out[n.text] = s
		}
	}
	return out
}

func (d *decoder) steps(v *value, phase string) []*Step {
	if v.kind != kindArray {
		d.fail(v.pos, "%s must be a list of steps, not %s", phase, v.kind)
		return nil
	}
	out := make([]*Step, 0, len(v.elems))
	for i, e := range v.elems {
		d.step = fmt.Sprintf("%s[%d]", phase, i)
		if s := d.stepValue(e); s != nil {
			out = append(out, s)
		}
	}
	d.step = ""
	return out
}

func (d *decoder) stepValue(v *value) *Step {
	if v.kind != kindObject {
		d.fail(v.pos, "a step must be an object like {call: TOOL} or {tap: {text: …}}, not %s", v.kind)
		return nil
	}
	var kinds []StepKind
	var kindAt []Pos
	for _, n := range v.names {
		if slices.Contains(stepKinds, StepKind(n.text)) {
			kinds = append(kinds, StepKind(n.text))
			kindAt = append(kindAt, n.pos)
		}
	}
	switch len(kinds) {
	case 0:
		all := make([]string, len(stepKinds))
		for i, k := range stepKinds {
			all[i] = string(k)
		}
		for _, n := range v.names {
			if near := nearest(n.text, all); near != "" && !slices.Contains(commonKeys, n.text) && !slices.Contains(resultKeys, n.text) {
				d.fail(n.pos, "unknown key %q (did you mean %q?); a step has one of %s", n.text, near, strings.Join(all, ", "))
				return nil
			}
		}
		d.fail(v.pos, "a step needs one of %s", strings.Join(all, ", "))
		return nil
	case 1:
	default:
		d.fail(kindAt[1], "a step does one thing: it has both %s and %s (make two steps)", kinds[0], kinds[1])
		return nil
	}
	s := &Step{Kind: kinds[0], Pos: v.pos, Attempts: 1}
	before := len(d.errs)
	if !d.object(v, "a "+string(s.Kind)+" step", stepKeys[s.Kind]...) {
		return nil
	}
	if n := v.get("name"); n != nil {
		s.Name, _ = d.nonEmpty(n, "name")
	}
	if t := v.get("timeout"); t != nil {
		s.Timeout, _ = d.duration(t, "timeout", time.Millisecond, MaxStepTimeout)
	}
	if r := v.get("retry"); r != nil {
		d.retry(r, s)
	}
	if sv := v.get("save"); sv != nil {
		if name, ok := d.nonEmpty(sv, "save"); ok {
			if !isName(name) || name == "var" || name == "env" {
				d.fail(sv.pos, "save: %q is not a name to save under (letters, digits, '_' and '-'; not var or env)", name)
			} else {
				s.Save = name
			}
		}
	}
	body := v.get(string(s.Kind))
	switch s.Kind {
	case KindCall:
		s.Tool, _ = d.nonEmpty(body, "call (the tool id)")
		if a := v.get("arguments"); a != nil {
			s.args = d.arguments(a, "arguments")
			s.argsJSON = constJSON(s.args)
		}
	case KindBatch:
		d.batch(v, body, s)
	case KindScreenshot:
		if name, ok := d.nonEmpty(body, "screenshot (its name)"); ok {
			if !isName(name) {
				d.fail(body.pos, "screenshot: %q is not a name (letters, digits, '_' and '-')", name)
			}
			s.shot = name
		}
	case KindInclude:
		s.Include, _ = d.nonEmpty(body, "include (a path)")
	default:
		s.ui = d.ui(s.Kind, body)
	}
	if e := v.get("expect"); e != nil {
		s.expects = d.expects(e)
	}
	if e := v.get("expectError"); e != nil {
		s.expectErr = d.expectError(e)
	}
	if len(d.errs) > before {
		for _, e := range d.errs[before:] {
			if e.Step == d.step {
				e.Step += " " + s.Label()
			}
		}
		return nil
	}
	return s
}

func (d *decoder) retry(v *value, s *Step) {
	if !d.object(v, "retry", "attempts", "delay") {
		return
	}
	a := v.get("attempts")
	if a == nil {
		d.fail(v.pos, "retry needs attempts: (how many times to run the step, 2 to %d)", MaxAttempts)
		return
	}
	s.Attempts, _ = d.integer(a, "retry.attempts", 2, MaxAttempts)
	s.RetryDelay = 200 * time.Millisecond
	if dl := v.get("delay"); dl != nil {
		s.RetryDelay, _ = d.duration(dl, "retry.delay", 0, time.Minute)
	}
}

// arguments reads a tool's arguments: an object, or one whole ${…} that holds one.
func (d *decoder) arguments(v *value, what string) *value {
	switch v.kind {
	case kindObject:
		return d.tmplValue(v)
	case kindString:
		if t, err := parseTemplate(v.text, v.pos); err == nil && t != nil && t.whole() != nil {
			v.tmpl = t
			return v
		}
	}
	d.fail(v.pos, "%s must be an object (or one ${…} that holds one), not %s", what, v.kind)
	return nil
}

func (d *decoder) batch(step, body *value, s *Step) {
	if body.kind != kindArray {
		d.fail(body.pos, "batch must be a list of calls like {call: TOOL, arguments: {…}}, not %s", body.kind)
		return
	}
	if len(body.elems) == 0 || len(body.elems) > MaxBatchCalls {
		d.fail(body.pos, "a batch has 1 to %d calls, not %d", MaxBatchCalls, len(body.elems))
		return
	}
	for i, c := range body.elems {
		what := fmt.Sprintf("batch call %d", i)
		if !d.object(c, what, "call", "arguments", "callId") {
			continue
		}
		bc := batchCall{}
		if t := c.get("call"); t == nil {
			d.fail(c.pos, "%s needs call: (the tool id)", what)
		} else {
			bc.tool, _ = d.nonEmpty(t, what+": call")
		}
		if a := c.get("arguments"); a != nil {
			bc.args = d.arguments(a, what+": arguments")
			bc.argsJSON = constJSON(bc.args)
		}
		if id := c.get("callId"); id != nil {
			bc.callID, _ = d.nonEmpty(id, what+": callId")
		}
		s.calls = append(s.calls, bc)
	}
	if coe := step.get("continueOnError"); coe != nil {
		s.continueOnError, _ = d.boolean(coe, "continueOnError")
	}
}

// The ranges of the UI steps' numbers, as the official CLI's flags take them.
const (
	minUITimeout = 100 * time.Millisecond
	maxUITimeout = time.Minute
)

func (d *decoder) ui(k StepKind, body *value) *uiStep {
	what := "the " + string(k) + " step's selector"
	if k == KindBack && body.kind == kindObject && len(body.names) == 0 {
		return &uiStep{}
	}
	if !d.object(body, what, uiKeys[k]...) {
		return nil
	}
	u := &uiStep{}
	str := func(name string) *value {
		if v := body.get(name); v != nil {
			return d.tmplString(v, name)
		}
		return nil
	}
	flag := func(name string) bool {
		if v := body.get(name); v != nil {
			b, _ := d.boolean(v, name)
			return b
		}
		return false
	}
	optBool := func(name string) *bool {
		if v := body.get(name); v != nil {
			if b, ok := d.boolean(v, name); ok {
				return &b
			}
		}
		return nil
	}
	u.sel = selector{automationID: str("automationId"), text: str("text"), role: str("role"), ancestor: str("ancestor"),
		contains: flag("contains"), caseSensitive: flag("caseSensitive")}
	if v := body.get("index"); v != nil {
		if n, ok := d.integer(v, "index", 0, 1<<20); ok {
			u.sel.index = &n
		}
	}
	criteria := u.sel.automationID != nil || u.sel.text != nil || u.sel.role != nil || u.sel.ancestor != nil
	if !criteria && (u.sel.index != nil || u.sel.contains || u.sel.caseSensitive) {
		d.fail(body.pos, "index, contains and caseSensitive refine a selector: give automationId, text, role or ancestor too")
	}
	if v := body.get("timeout"); v != nil {
		u.timeout, _ = d.duration(v, string(k)+".timeout", minUITimeout, maxUITimeout)
	}
	switch k {
	case KindType:
		u.value = str("value")
		if u.value == nil {
			d.fail(body.pos, "type needs value: (the text to type)")
		}
		u.append = flag("append")
	case KindSwipe:
		u.direction = "up"
		if v := body.get("direction"); v != nil {
			if s, ok := d.str(v, "direction"); ok {
				if !slices.Contains([]string{"up", "down", "left", "right"}, s) {
					d.fail(v.pos, "direction must be up, down, left or right, not %q", s)
				}
				u.direction = s
			}
		}
	case KindWait:
		u.condition = "visible"
		if v := body.get("condition"); v != nil {
			if s, ok := d.str(v, "condition"); ok {
				if !slices.Contains([]string{"visible", "hidden", "stable"}, s) {
					d.fail(v.pos, "condition must be visible, hidden or stable, not %q", s)
				}
				u.condition = s
			}
		}
		if v := body.get("poll"); v != nil {
			u.poll, _ = d.duration(v, "poll", 100*time.Millisecond, 5*time.Second)
		}
		if v := body.get("stableSamples"); v != nil {
			u.samples, _ = d.integer(v, "stableSamples", 2, 20)
		}
	case KindAssert:
		u.exists = optBool("exists")
		u.absent = flag("absent")
		if v := body.get("count"); v != nil {
			if n, ok := d.integer(v, "count", 0, 1<<20); ok {
				u.count = &n
			}
		}
		u.expectedText, u.expectedValue = str("expectedText"), str("expectedValue")
		u.expectedVisible, u.expectedEnabled = optBool("expectedVisible"), optBool("expectedEnabled")
		if u.absent && u.count != nil && *u.count != 0 {
			d.fail(body.pos, "absent means count: 0; it contradicts count: %d", *u.count)
		}
		if u.absent && u.exists != nil && *u.exists {
			d.fail(body.pos, "absent contradicts exists: true")
		}
	}
	if !criteria && k != KindBack && !(k == KindWait && u.condition == "stable") && !(k == KindSwipe) {
		d.fail(body.pos, "%s needs a selector: automationId, text, role or ancestor", k)
	}
	return u
}
