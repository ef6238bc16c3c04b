package flow

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/uitree"
)

// Recording a flow: a session's recorded tool traffic (docs/recordings.md) turned into the
// steps that replay it. Each call the host saw becomes a call step that expects what came
// back, as far as it is stable from one run to the next; ids and times are not, so an id a
// later call sends back is saved and referenced (${create.id}), and one that is not is
// matched by its shape; UI actions on tree nodes become selector steps.

// Traffic is one traffic record of a recording, as the host API lists them: when, and
// its data object. Payload is the message's payload when the record kept it as a file
// rather than in Data (the caller reads it with Backend.Blob); nil otherwise.
type Traffic struct {
	At      time.Time
	Data    jsontext.Value
	Payload jsontext.Value
}

// RecordOptions chooses what a recorded flow holds and names it.
type RecordOptions struct {
	// Name and AppID are the flow's; Session names where it was recorded (a comment).
	Name, AppID, Session string
	// Since and Until keep the calls made in [Since, Until) (zero: unbounded).
	Since, Until time.Time
	// Origins keeps the calls of these origins ("cli", "player", "mcp:claude-code#1f2e3d4c",
	// "flow", "internal"; an entry ending in ':' keeps every origin it begins, "mcp:"; an MCP
	// client's name without a session tag, "mcp:claude-code", keeps all its sessions);
	// all but "internal" when empty. A record without an origin (recorded before origins
	// were) is kept unless Origins is given.
	Origins []string
}

// exchange is one call the recording holds: the request and what came back.
type exchange struct {
	at     time.Time
	origin string
	typ    string // tool.call or tool.batch
	req    *value // the request's payload
	ok     bool
	resp   *value // the result (a tool.result's result member, a batch result)
	code   string // the error code of a failure
}

// Record writes the calls of a recording's traffic that opts selects as a flow file
// (YAML). It reports how many calls became steps.
func Record(traffic []Traffic, opts RecordOptions) ([]byte, int, error) {
	ex, err := exchanges(traffic, opts)
	if err != nil {
		return nil, 0, err
	}
	r := &recorder{ids: map[string]string{}, pending: map[string]string{}, names: map[string]int{}}
	for _, e := range ex {
		r.add(e)
	}
	r.markSaves()
	return r.write(opts), len(r.steps), nil
}

// exchanges pairs requests with their answers by request id, in the order the requests
// were made, keeping those opts selects. A refusal by the host (direction denied) is an
// exchange of its own.
func exchanges(traffic []Traffic, opts RecordOptions) ([]exchange, error) {
	var out []exchange
	open := map[string]int{}
	for _, t := range traffic {
		d, err := parseResult(t.Data)
		if err != nil || d.kind != kindObject {
			return nil, fmt.Errorf("a traffic record that is not a JSON object: %v", err)
		}
		str := func(name string) string {
			if v := d.get(name); v != nil && v.kind == kindString {
				return v.text
			}
			return ""
		}
		payload := d.get("payload")
		if payload == nil && len(t.Payload) > 0 {
			if payload, err = parseResult(t.Payload); err != nil {
				return nil, fmt.Errorf("a traffic record's payload: %v", err)
			}
		}
		dir, typ, id := str("direction"), str("type"), str("requestId")
		switch {
		case dir == "request" && typ == hostapi.TrafficUIOperation:
			// An assert or a wait the host ran: one record, its request and outcome.
			if (!opts.Since.IsZero() && t.At.Before(opts.Since)) || (!opts.Until.IsZero() && !t.At.Before(opts.Until)) ||
				!keepOrigin(str("origin"), opts.Origins) || payload == nil {
				continue
			}
			out = append(out, exchange{at: t.At, origin: str("origin"), typ: typ, req: payload, resp: payload,
				ok: str("outcome") == "ok", code: str("errorCode")})
		case (dir == "request" || dir == "denied") && (typ == "tool.call" || typ == "tool.batch"):
			if (!opts.Since.IsZero() && t.At.Before(opts.Since)) || (!opts.Until.IsZero() && !t.At.Before(opts.Until)) {
				continue
			}
			if !keepOrigin(str("origin"), opts.Origins) || payload == nil {
				continue
			}
			e := exchange{at: t.At, origin: str("origin"), typ: typ, req: payload}
			if dir == "denied" {
				e.code = str("errorCode")
				out = append(out, e)
				continue
			}
			open[id] = len(out)
			out = append(out, e)
		case dir == "response":
			i, ok := open[id]
			if !ok {
				continue
			}
			delete(open, id)
			e := &out[i]
			switch typ {
			case "tool.result":
				e.ok = str("outcome") == "ok"
				if payload != nil {
					e.resp = payload.get("result")
				}
			case "tool.batch.result":
				e.ok = str("outcome") == "ok"
				e.resp = payload
			case "tool.error":
				e.code = str("errorCode")
				if payload != nil && e.code == "" {
					if c := payload.get("code"); c != nil {
						e.code = c.text
					}
				}
			}
		}
	}
	// A request whose answer the recording does not hold (the session ended, the record
	// was evicted) says nothing to expect: it is left out.
	kept := out[:0]
	for _, e := range out {
		if e.resp != nil || e.code != "" {
			kept = append(kept, e)
		}
	}
	return kept, nil
}

func keepOrigin(origin string, origins []string) bool {
	if len(origins) == 0 {
		return origin != hostapi.OriginInternal
	}
	for _, o := range origins {
		// "mcp:claude-code" keeps every MCP session of that client ("mcp:claude-code#1f2e3d4c").
		if o == origin || (strings.HasSuffix(o, ":") && strings.HasPrefix(origin, o)) ||
			(strings.HasPrefix(o, hostapi.OriginMCP) && !strings.Contains(o, "#") && strings.HasPrefix(origin, o+"#")) {
			return true
		}
	}
	return false
}

// recorder builds the steps.
type recorder struct {
	steps []*recStep
	// ids maps an id value a result held to the reference that reads it back.
	ids map[string]string
	// pending holds the ids of the step being written: its own expectations cannot read
	// what it saves, so they join ids when it is done (commit).
	pending map[string]string
	// names counts the save names given, to make them unique.
	names map[string]int
	// tree is the last visual tree captured: UI actions are resolved against it.
	tree *uitree.Tree
	// queried holds the matches of the last ui.query_nodes (under a root of no id):
	// actions on nodes the tree does not have are resolved against them.
	queried *uitree.Tree
	shot    int
}

// recStep is one step being written.
type recStep struct {
	kind    StepKind
	tool    string
	args    *value // with references in place of ids
	batch   []*value
	coe     bool
	save    string
	used    bool // a later step reads what it saves
	expects []recExpect
	errCode string
	ui      map[string]*value // a UI step's selector and parameters
}

type recExpect struct {
	path, op string
	operand  *value
}

// maxRecordedExpects bounds the expectations written for one result, maxRecordedDepth how
// deep into it they look.
const (
	maxRecordedExpects = 10
	maxRecordedDepth   = 3
)

func (r *recorder) add(e exchange) {
	switch e.typ {
	case "tool.batch":
		r.addBatch(e)
		return
	case hostapi.TrafficUIOperation:
		if s := r.uiOperation(e); s != nil {
			r.steps = append(r.steps, s)
		}
		return
	}
	tool := text(orNull(e.req.get("toolId")))
	args := e.req.get("arguments")
	switch tool {
	case wire.VisualTreeToolID:
		// A capture made to find a node, by the UI layer or a person: what it shows
		// changes with every run, and the UI steps resolve their own.
		if e.resp != nil {
			if t, err := uitree.Parse(e.resp.json()); err == nil {
				r.tree = t
			}
		}
		return
	case "ui.query_nodes":
		// Its matches are nodes of a fresh capture: an action on one of them that follows
		// is resolved against them.
		r.queried = nil
		if m := e.resp.get("matches"); e.ok && m != nil && m.kind == kindArray {
			legacy := append(append([]byte(`{"root":{"id":"","type":"Query","children":`), m.json()...), "}}"...)
			if t, err := uitree.Parse(legacy); err == nil {
				r.queried = t
			}
		}
		return
	case wire.ScreenshotToolID:
		r.shot++
		r.steps = append(r.steps, &recStep{kind: KindScreenshot, tool: fmt.Sprintf("screen-%d", r.shot)})
		return
	case "ui.perform_action":
		if s := r.uiStep(args, e); s != nil {
			r.steps = append(r.steps, s)
			return
		}
	}
	s := &recStep{kind: KindCall, tool: tool, args: r.refer(args)}
	if !e.ok || e.resp == nil {
		s.errCode = cmpOr(e.code, "failed")
	} else {
		s.save = r.saveName(tool)
		r.expect(s, e.resp, "", "", 0)
		r.commit()
	}
	r.steps = append(r.steps, s)
}

func (r *recorder) addBatch(e exchange) {
	if r.splitBatch(e) {
		return
	}
	s := &recStep{kind: KindBatch}
	if calls := e.req.get("calls"); calls != nil {
		for _, c := range calls.elems {
			call := &value{kind: kindObject}
			if t := c.get("toolId"); t != nil {
				call.names = append(call.names, &value{kind: kindString, text: "call"})
				call.elems = append(call.elems, t)
			}
			if a := c.get("arguments"); a != nil {
				call.names = append(call.names, &value{kind: kindString, text: "arguments"})
				call.elems = append(call.elems, r.refer(a))
			}
			if id := c.get("callId"); id != nil {
				call.names = append(call.names, &value{kind: kindString, text: "callId"})
				call.elems = append(call.elems, id)
			}
			s.batch = append(s.batch, call)
		}
	}
	if coe := e.req.get("continueOnError"); coe != nil && coe.text == "true" {
		s.coe = true
	}
	switch {
	case e.code != "" && e.resp == nil:
		s.errCode = e.code
	case e.resp != nil && e.resp.get("success") != nil && e.resp.get("success").text == "false":
		// A batch with a call that failed fails its step with that call's error (the
		// first), as the runner reports it: expect that error.
		s.errCode = "batch_failed"
		for _, item := range orNull(e.resp.get("results")).elems {
			if st := item.get("success"); st != nil && st.text == "true" {
				continue
			}
			if c := item.get("error").get("code"); c != nil && c.kind == kindString {
				s.errCode = c.text
				break
			}
		}
	case e.resp != nil:
		s.save = r.saveName("batch")
		// A batch's figures say how it went; each call's result is one member of results.
		for _, m := range []string{"success", "completed", "stoppedEarly"} {
			if v := e.resp.get(m); v != nil {
				s.expects = append(s.expects, recExpect{path: "/" + m, op: "equals", operand: v})
			}
		}
		if res := e.resp.get("results"); res != nil {
			for i, item := range res.elems {
				if len(s.expects) >= maxRecordedExpects {
					break
				}
				if v := item.get("result"); v != nil {
					r.expect(s, v, fmt.Sprintf("/results/%d/result", i), "", 1)
				}
			}
			r.commit()
		}
	}
	r.steps = append(r.steps, s)
}

// splitBatch records a batch that acts on a node of the last captured tree as its calls,
// one step each, in order: the action becomes a selector step (the node reference it sent
// is stale in any other run), the other calls call steps. A call the batch did not reach
// (it stopped at a failure) is left out, as the batch left it. It reports whether it did.
func (r *recorder) splitBatch(e exchange) bool {
	calls := e.req.get("calls")
	if calls == nil || e.resp == nil || (r.tree == nil && r.queried == nil) {
		return false
	}
	acts := false
	for _, c := range calls.elems {
		if text(orNull(c.get("toolId"))) == "ui.perform_action" && r.uiStep(c.get("arguments"), exchange{ok: true}) != nil {
			acts = true
		}
	}
	if !acts {
		return false
	}
	results := map[int]*value{}
	if res := e.resp.get("results"); res != nil {
		for i, item := range res.elems {
			idx := i
			if v := item.get("index"); v != nil && v.kind == kindNumber {
				if n, err := strconv.Atoi(v.text); err == nil {
					idx = n
				}
			}
			results[idx] = item
		}
	}
	for i, c := range calls.elems {
		item, ok := results[i]
		if !ok {
			break
		}
		one := exchange{at: e.at, origin: e.origin, typ: "tool.call", req: c}
		if st := item.get("success"); st != nil && st.text == "true" {
			one.ok, one.resp = true, item.get("result")
			if one.resp == nil {
				one.resp = &value{kind: kindNull}
			}
		} else {
			one.code = "failed"
			if c := item.get("error").get("code"); c != nil && c.kind == kindString {
				one.code = c.text
			}
		}
		r.add(one)
	}
	return true
}

// uiStep turns a ui.perform_action on a node of the last captured tree into a selector
// step, when the node has something stable to select it by; nil otherwise (the call is
// kept as it was, with a comment).
func (r *recorder) uiStep(args *value, e exchange) *recStep {
	if args == nil || (r.tree == nil && r.queried == nil) {
		return nil
	}
	nodeID := args.get("nodeId")
	if ref := args.get("reference"); ref != nil {
		nodeID = ref.get("nodeId")
	}
	action := text(orNull(args.get("action")))
	if nodeID == nil || nodeID.kind != kindString {
		return nil
	}
	var sel map[string]*value
	if n := nodeIn(r.tree, nodeID.text); n != nil {
		sel = stableSelector(r.tree, n, r.referIn)
	} else if n := nodeIn(r.queried, nodeID.text); n != nil && nodeID.text != "" && n.AutomationID != "" {
		// A query's matches are not the whole screen: only an automation id, which apps
		// keep unique, selects the node without it.
		sel = map[string]*value{"automationId": r.referIn(n.AutomationID)}
	}
	if sel == nil {
		return nil
	}
	s := &recStep{ui: sel}
	val := args.get("value")
	switch action {
	case "tap", "toggle", "select":
		s.kind = KindTap
	case "setValue", "typeText":
		if val == nil || val.kind != kindString {
			return nil
		}
		s.kind = KindType
		sel["value"] = r.refer(val)
		if action == "typeText" {
			sel["append"] = &value{kind: kindBool, text: "true"}
		}
	case "scroll", "swipe":
		// ansight ui swipe (and a flow's swipe step) sends the swipe's direction as the
		// value and in options; a scroll of another client names it in one of them.
		s.kind = KindSwipe
		dir := val
		if o := args.get("options"); o != nil && o.get("direction") != nil {
			dir = o.get("direction")
		}
		if dir != nil && dir.kind == kindString && slices.Contains([]string{"up", "down", "left", "right"}, dir.text) {
			sel["direction"] = dir
		}
	default:
		return nil
	}
	if !e.ok {
		s.errCode = cmpOr(e.code, "failed")
	}
	return s
}

// uiOperation turns a recorded ui assert or wait into its step: the selector and the
// parameters as the request had them; one that did not pass expects its error.
func (r *recorder) uiOperation(e exchange) *recStep {
	op := text(orNull(e.req.get("operation")))
	s := &recStep{ui: map[string]*value{}}
	switch op {
	case "assert":
		s.kind = KindAssert
	case "wait":
		s.kind = KindWait
	default:
		return nil
	}
	if sel := e.req.get("selector"); sel != nil && sel.kind == kindObject {
		for i, n := range sel.names {
			v := sel.elems[i]
			switch n.text {
			case "automationId", "text", "role":
				if v.kind == kindString {
					s.ui[n.text] = r.referIn(v.text)
				}
			case "ancestorAutomationId":
				if v.kind == kindString {
					s.ui["ancestor"] = r.referIn(v.text)
				}
			case "index", "contains", "caseSensitive":
				s.ui[n.text] = v
			default:
				return nil // nodeId, type, action, visible, enabled: no flow selector says them
			}
		}
	}
	ms := func(v *value) *value { return &value{kind: kindString, text: v.text + "ms"} }
	for i, n := range e.req.names {
		v := e.req.elems[i]
		switch n.text {
		case "operation", "selector":
		case "condition", "stableSamples":
			s.ui[n.text] = v
		case "timeoutMs":
			s.ui["timeout"] = ms(v)
		case "pollMs":
			s.ui["poll"] = ms(v)
		case "exists", "count", "expectedVisible", "expectedEnabled":
			s.ui[n.text] = v
		case "expectedText", "expectedValue":
			s.ui[n.text] = r.refer(v)
		case "exact":
		default:
			return nil
		}
	}
	criteria := s.ui["automationId"] != nil || s.ui["text"] != nil || s.ui["role"] != nil || s.ui["ancestor"] != nil
	if c := s.ui["condition"]; !criteria && (s.kind != KindWait || c == nil || c.text != "stable") {
		return nil // a flow's assert, and a wait but a stable one, need a selector
	}
	if !e.ok {
		s.errCode = cmpOr(e.code, "failed")
	}
	return s
}

// nodeIn is t's node of that id, nil when t is.
func nodeIn(t *uitree.Tree, id string) *uitree.Node {
	if t == nil {
		return nil
	}
	return t.Node(id)
}

// stableSelector picks criteria that select n in t without its node id: its automation
// id, else its text (with its role), with an index when they match more than n.
func stableSelector(t *uitree.Tree, n *uitree.Node, refer func(string) *value) map[string]*value {
	str := func(s string) *value { return &value{kind: kindString, text: s} }
	for _, try := range []uitree.Selector{
		{AutomationID: n.AutomationID},
		{Text: n.Text, Role: n.Role},
		{Text: n.Text},
	} {
		if !try.HasCriteria() || (try.AutomationID == "" && try.Text == "") {
			continue
		}
		matches := t.Find(try)
		i := slices.Index(matches, n)
		if i < 0 {
			continue
		}
		sel := map[string]*value{}
		if try.AutomationID != "" {
			sel["automationId"] = refer(try.AutomationID)
		}
		if try.Text != "" {
			sel["text"] = refer(try.Text)
		}
		if try.Role != "" {
			sel["role"] = str(try.Role)
		}
		if i > 0 || len(matches) > 1 {
			sel["index"] = &value{kind: kindNumber, text: strconv.Itoa(i)}
		}
		return sel
	}
	return nil
}

// refer returns v with every string equal to an id an earlier result held replaced by the
// reference that reads it, and with literal "${" escaped.
func (r *recorder) refer(v *value) *value {
	if v == nil {
		return nil
	}
	switch v.kind {
	case kindString:
		if ref, ok := r.ids[v.text]; ok {
			r.use(ref)
			return &value{kind: kindString, text: ref, tmpl: &vtext{}}
		}
		return v
	case kindNumber:
		if ref, ok := r.ids["#"+v.text]; ok {
			r.use(ref)
			return &value{kind: kindString, text: ref, tmpl: &vtext{}}
		}
		return v
	case kindArray, kindObject:
		out := &value{kind: v.kind, names: v.names, elems: make([]*value, len(v.elems))}
		for i, e := range v.elems {
			out.elems[i] = r.refer(e)
		}
		return out
	}
	return v
}

// referIn is a selector's string with an id an earlier result held, whole or as the
// part after the last '-', '_', '.', ':' or '/' (noteRow-n4, the row of note n4),
// replaced by the reference that reads it: the node a run selects is the one of the item
// that run created.
func (r *recorder) referIn(s string) *value {
	if v := r.refer(&value{kind: kindString, text: s}); v.tmpl != nil {
		return v
	}
	if i := strings.LastIndexAny(s, "-_.:/"); i >= 0 && i < len(s)-1 {
		if ref, ok := r.ids[s[i+1:]]; ok {
			r.use(ref)
			return &value{kind: kindString, text: strings.ReplaceAll(s[:i+1], "${", "$${") + ref, tmpl: &vtext{}}
		}
	}
	return &value{kind: kindString, text: s}
}

// use marks the step that saves what ref reads.
func (r *recorder) use(ref string) {
	name := strings.TrimPrefix(ref, "${")
	name, _, _ = strings.Cut(name, ".")
	name = strings.TrimSuffix(name, "}")
	for _, s := range r.steps {
		if s.save == name {
			s.used = true
		}
	}
}

// saveName makes a unique name to save a tool's result under: its id's last part.
func (r *recorder) saveName(tool string) string {
	base := tool[strings.LastIndexByte(tool, '.')+1:]
	base = strings.Map(func(c rune) rune {
		if c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			return c
		}
		return '_'
	}, base)
	if base == "" || base == "var" || base == "env" {
		base = "result"
	}
	r.names[base]++
	if n := r.names[base]; n > 1 {
		return fmt.Sprintf("%s%d", base, n)
	}
	return base
}

var (
	timePattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
	uuidRE      = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	hexRE       = regexp.MustCompile(`^[0-9a-f]{8,}$`)
	prefixedRE  = regexp.MustCompile(`^([A-Za-z_]*[A-Za-z_:.-])?[0-9]+$`)
)

// expect adds expectations on v, found at path, to s; key is v's member name.
func (r *recorder) expect(s *recStep, v *value, path, key string, depth int) {
	if len(s.expects) >= maxRecordedExpects {
		return
	}
	add := func(op string, operand *value) {
		s.expects = append(s.expects, recExpect{path: path, op: op, operand: operand})
	}
	str := func(t string) *value { return &value{kind: kindString, text: t} }
	switch v.kind {
	case kindObject:
		if depth >= maxRecordedDepth {
			add("exists", &value{kind: kindBool, text: "true"})
			return
		}
		descriptor := v.get("transferId") != nil && v.get("deliveryMode") != nil
		for i, n := range v.names {
			if descriptor && n.text == "status" {
				// A file transfer's status is where the transfer was when the host answered
				// (queued, complete): it races the call's answer.
				if len(s.expects) < maxRecordedExpects {
					s.expects = append(s.expects, recExpect{path: path + "/status", op: "exists", operand: &value{kind: kindBool, text: "true"}})
				}
				continue
			}
			r.expect(s, v.elems[i], path+"/"+escapePointer(n.text), n.text, depth+1)
		}
	case kindArray:
		add("length", &value{kind: kindNumber, text: strconv.Itoa(len(v.elems))})
		if len(v.elems) > 0 && depth < maxRecordedDepth {
			r.expect(s, v.elems[0], path+"/0", "", depth+1)
		}
	case kindString:
		switch {
		case isTimeText(v.text):
			add("matches", str(timePattern))
		case isIDKey(key):
			if _, known := r.ids[v.text]; known {
				add("equals", r.refer(v))
				return
			}
			r.remember(s, path, v.text, v)
			add("matches", str(idPattern(v.text)))
		default:
			add("equals", r.refer(v))
		}
	case kindNumber:
		switch {
		case isTimeKey(key):
			// Durations and clock readings differ every run.
		case isIDKey(key):
			r.remember(s, path, "#"+v.text, v)
			add("exists", &value{kind: kindBool, text: "true"})
		case isCounterKey(key):
			// A capture's revision counts every capture the app made since it started.
			add("exists", &value{kind: kindBool, text: "true"})
		default:
			add("equals", v)
		}
	default:
		add("equals", v)
	}
}

// remember records that the id at path of s's result may be sent back later.
func (r *recorder) remember(s *recStep, path, key string, v *value) {
	if _, ok := r.ids[key]; ok || s.save == "" || path == "" {
		return
	}
	if _, ok := r.pending[key]; ok {
		return
	}
	dots := strings.ReplaceAll(strings.TrimPrefix(path, "/"), "/", ".")
	if !isDotPath(dots) {
		return
	}
	r.pending[key] = "${" + s.save + "." + dots + "}"
}

// commit makes the ids the step just written holds readable by the steps after it.
func (r *recorder) commit() {
	for k, ref := range r.pending {
		r.ids[k] = ref
	}
	clear(r.pending)
}

func isDotPath(p string) bool {
	for seg := range strings.SplitSeq(p, ".") {
		if !isName(seg) {
			return false
		}
	}
	return true
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func isTimeText(s string) bool {
	if len(s) < 20 || s[4] != '-' || s[10] != 'T' {
		return false
	}
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// isIDKey: id, noteId, note_id, snapshotID, …
func isIDKey(k string) bool {
	return k == "id" || strings.HasSuffix(k, "Id") || strings.HasSuffix(k, "ID") || strings.HasSuffix(k, "_id")
}

// isCounterKey: revision, latestRevision, staleAfterRevision — counters of what the app
// did since it started, which a fresh run does not repeat.
func isCounterKey(k string) bool {
	return strings.HasSuffix(strings.ToLower(k), "revision")
}

// isTimeKey: createdAt, durationMs, elapsed, uptimeSeconds, timestamp, …
func isTimeKey(k string) bool {
	lk := strings.ToLower(k)
	for _, s := range []string{"ms", "at", "atutc", "time", "seconds", "nanos"} {
		if strings.HasSuffix(lk, s) && len(lk) > len(s) {
			return true
		}
	}
	for _, s := range []string{"duration", "elapsed", "uptime", "timestamp"} {
		if strings.Contains(lk, s) {
			return true
		}
	}
	return false
}

// idPattern is a regular expression for ids of the shape of id: n5 → ^n[0-9]+$.
func idPattern(id string) string {
	switch {
	case uuidRE.MatchString(id):
		return `^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	case hexRE.MatchString(id):
		return fmt.Sprintf("^[0-9a-f]{%d}$", len(id))
	case prefixedRE.MatchString(id):
		prefix := strings.TrimRight(id, "0123456789")
		return "^" + regexp.QuoteMeta(prefix) + "[0-9]+$"
	}
	return `^\S+$`
}

// markSaves drops the save of every step nothing reads.
func (r *recorder) markSaves() {
	for _, s := range r.steps {
		if !s.used {
			s.save = ""
		}
	}
}

func orNull(v *value) *value {
	if v == nil {
		return &value{kind: kindNull}
	}
	return v
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// write renders the flow as YAML: keys plain, values in JSON's notation (which YAML
// reads as flow style), so that every value is exactly what was recorded.
func (r *recorder) write(opts RecordOptions) []byte {
	var b bytes.Buffer
	q := func(s string) string {
		out, _ := jsontext.AppendQuote(nil, s)
		return string(out)
	}
	fmt.Fprintf(&b, "# Recorded by 'ansight test record'")
	if opts.Session != "" {
		fmt.Fprintf(&b, " from session %s", opts.Session)
	}
	b.WriteString(".\n# Ids and times differ from run to run: an id sent back later is saved and read as\n# ${name.path}, other ids and times are matched by their shape.\n")
	fmt.Fprintf(&b, "schema: %s\n", Schema)
	name := opts.Name
	if name == "" {
		name = "recorded"
		if opts.Session != "" {
			name += " from " + opts.Session
		}
	}
	fmt.Fprintf(&b, "name: %s\n", q(name))
	if opts.AppID != "" {
		fmt.Fprintf(&b, "appId: %s\n", q(opts.AppID))
	}
	b.WriteString("steps:\n")
	if len(r.steps) == 0 {
		b.WriteString("  []\n")
	}
	for _, s := range r.steps {
		switch s.kind {
		case KindCall:
			fmt.Fprintf(&b, "  - call: %s\n", q(s.tool))
			if s.args != nil {
				fmt.Fprintf(&b, "    arguments: %s\n", flowJSON(s.args))
			}
		case KindBatch:
			b.WriteString("  - batch:\n")
			for _, c := range s.batch {
				fmt.Fprintf(&b, "      - %s\n", flowJSON(c))
			}
			if s.coe {
				b.WriteString("    continueOnError: true\n")
			}
		case KindScreenshot:
			fmt.Fprintf(&b, "  - screenshot: %s\n", s.tool)
			continue
		default:
			keys := make([]string, 0, len(s.ui))
			for k := range s.ui {
				keys = append(keys, k)
			}
			slices.SortFunc(keys, func(a, b string) int { return uiKeyOrder(a) - uiKeyOrder(b) })
			obj := &value{kind: kindObject}
			for _, k := range keys {
				obj.names = append(obj.names, &value{kind: kindString, text: k})
				obj.elems = append(obj.elems, s.ui[k])
			}
			fmt.Fprintf(&b, "  - %s: %s\n", s.kind, flowJSON(obj))
		}
		if s.save != "" {
			fmt.Fprintf(&b, "    save: %s\n", s.save)
		}
		if s.errCode != "" {
			fmt.Fprintf(&b, "    expectError: {code: %s}\n", q(s.errCode))
		}
		if len(s.expects) > 0 {
			b.WriteString("    expect:\n")
			for _, e := range s.expects {
				fmt.Fprintf(&b, "      - {path: %s, %s: %s}\n", q(e.path), e.op, flowJSON(e.operand))
			}
		}
	}
	return b.Bytes()
}

func uiKeyOrder(k string) int {
	return slices.Index([]string{"automationId", "text", "role", "ancestor", "index", "contains", "caseSensitive", "value", "append", "direction",
		"condition", "timeout", "poll", "stableSamples", "exists", "count", "expectedText", "expectedValue", "expectedVisible", "expectedEnabled"}, k)
}

// flowJSON writes v as JSON for a flow: strings that are references as they are, every
// other "${" escaped as "$${" (a recorded value is never a reference).
func flowJSON(v *value) string {
	return string(appendFlowJSON(nil, v))
}

func appendFlowJSON(dst []byte, v *value) []byte {
	switch v.kind {
	case kindString:
		s := v.text
		if v.tmpl == nil {
			s = strings.ReplaceAll(s, "${", "$${")
		}
		out, _ := jsontext.AppendQuote(dst, s)
		return out
	case kindArray:
		dst = append(dst, '[')
		for i, e := range v.elems {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendFlowJSON(dst, e)
		}
		return append(dst, ']')
	case kindObject:
		dst = append(dst, '{')
		for i, e := range v.elems {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst, _ = jsontext.AppendQuote(dst, v.names[i].text)
			dst = append(dst, ": "...)
			dst = appendFlowJSON(dst, e)
		}
		return append(dst, '}')
	}
	return v.appendJSON(dst)
}

// maxPayload bounds a recorded payload read back from its file.
const maxPayload = 16 << 20

// RecordSession reads a session's recorded tool traffic from b (every page, with the
// payloads the host kept as files) and writes the calls opts selects as a flow (Record).
// It is what 'ansight test record', the player's Save as flow and the MCP bridge's
// ansight_record_flow share.
func RecordSession(ctx context.Context, b hostapi.Backend, sessionID string, opts RecordOptions) ([]byte, int, error) {
	req := hostapi.RecordsRequest{Kinds: []hostapi.RecordKind{hostapi.RecordTraffic}, Since: opts.Since, Until: opts.Until, Limit: 10_000}
	var traffic []Traffic
	for {
		page, err := b.Records(ctx, sessionID, req)
		if err != nil {
			return nil, 0, err
		}
		for _, r := range page.Records {
			t := Traffic{At: r.At, Data: r.Data}
			if r.Blob != "" {
				if t.Payload, err = readPayload(ctx, b, sessionID, r.Seq); err != nil {
					return nil, 0, err
				}
			}
			traffic = append(traffic, t)
		}
		if page.Next == 0 || len(page.Records) == 0 {
			break
		}
		req.After = page.Next
	}
	if opts.Session == "" {
		opts.Session = sessionID
	}
	return Record(traffic, opts)
}

func readPayload(ctx context.Context, b hostapi.Backend, sessionID string, seq int64) ([]byte, error) {
	blob, err := b.Blob(ctx, sessionID, seq)
	if err != nil {
		return nil, err
	}
	defer blob.Body.Close()
	data, err := io.ReadAll(io.LimitReader(blob.Body, maxPayload+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxPayload {
		return nil, fmt.Errorf("record %d: a payload larger than %d bytes", seq, maxPayload)
	}
	return data, nil
}
