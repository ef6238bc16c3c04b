package conformance

import (
	"context"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

var callChecks = []check{
	{"call.result", "a call of an executable read tool answers tool.result {toolId, success:true, result} (docs/protocol/calls.md#results)", checkCallResult},
	{"call.arguments_default", "absent or null arguments mean {} (docs/protocol/calls.md#call)", checkCallArgumentsDefault},
	{"call.unknown_tool", "an unknown toolId answers tool_not_found (docs/protocol/calls.md#processing-order)", checkCallUnknownTool},
	{"call.missing_tool_id", "an absent, empty or blank toolId answers tool_call_missing_id (docs/protocol/calls.md#call)", checkCallMissingID},
	{"call.payload_not_object", "a call payload that is not an object answers tool_call_payload_invalid (docs/protocol/calls.md#call)", checkCallPayloadNotObject},
	{"call.arguments_not_object", "arguments that are not an object answer tool_arguments_invalid (docs/protocol/calls.md#processing-order)", checkCallArgumentsNotObject},
	{"call.arguments_schema", "arguments that break the tool's schema answer tool_arguments_schema_invalid with details.errors[] of {path, code, message} (docs/protocol/catalog.md#validation)", checkCallArgumentsSchema},
	{"call.order_lookup", "lookup comes before the arguments: an unknown tool with bad arguments answers tool_not_found (docs/protocol/calls.md#processing-order)", checkCallOrderLookup},
	{"call.unavailable", "an unavailable tool answers its availability code (or tool_unavailable) with details = its runtime and retryable from it, before the arguments are looked at (docs/protocol/calls.md#processing-order)", checkCallUnavailable},
	{"call.guard_denied", "a visible tool the guard does not let run answers tool_execution_denied (docs/protocol/authorization.md#visibility-and-execution)", checkCallGuardDenied},
	{"call.after_bounds", "an after block with a delay outside 0..2000, a non-array include or an unknown name answers tool_call_payload_invalid (docs/protocol/calls.md#after)", checkCallAfterBounds},
	{"call.after_evidence", "after evidence: include absent means visualTree, aliases tree and visual_tree, outcomes {toolId, success, result} under evidence (docs/protocol/calls.md#evidence)", checkCallAfterEvidence},
	{"call.evidence_failure", "a failing evidence item is reported in evidence and does not fail the call (docs/protocol/calls.md#evidence)", checkCallEvidenceFailure},
}

// readCall returns the call the suite may run freely, or skips the check.
func (c *cx) readCall() wire.Call {
	if sc := c.r.opts.Scenario.ReadCall; sc != nil {
		return *sc
	}
	v := c.catalog()
	for _, t := range v.tools {
		if t.policy == wire.PolicyRead && t.executable && len(required(t.args)) == 0 && !c.r.special(t.id) {
			return wire.Call{ToolID: t.id, Arguments: jsontext.Value(`{}`)}
		}
	}
	c.skipf("the app has no executable read tool whose arguments are all optional (set Options.Scenario.ReadCall)")
	return wire.Call{}
}

// special reports tools the suite never picks for repeated calls: evidence and artifact
// tools (a transfer per call) and the scenario's large result.
func (r *run) special(id string) bool {
	sc := r.opts.Scenario
	return id == wire.ScreenshotToolID || (sc.LargeResult != nil && id == sc.LargeResult.ToolID) ||
		(sc.Artifact != nil && id == sc.Artifact.ToolID)
}

// refusable returns an executable tool that calls meant to be refused may address: read,
// or write with AllowWrite; never critical. keep narrows the choice.
func (c *cx) refusable(what string, keep func(*toolView) bool) *toolView {
	v := c.catalog()
	for _, pol := range []wire.Policy{wire.PolicyRead, wire.PolicyWrite} {
		if pol == wire.PolicyWrite && !c.r.opts.AllowWrite {
			break
		}
		for _, t := range v.tools {
			if t.policy == pol && keep(t) {
				return t
			}
		}
	}
	hint := ""
	if !c.r.opts.AllowWrite {
		hint = " (write tools are considered only with Options.AllowWrite)"
	}
	c.skipf("the app has no read tool %s%s", what, hint)
	return nil
}

// required lists a schema's required property names.
func required(schema map[string]any) []string {
	var out []string
	list, _ := schema["required"].([]any)
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// callPayload builds a call payload.
func callPayload(call wire.Call) string {
	b, err := wire.Marshal(call)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// callOK runs call and fails the check unless it succeeds; it returns the result payload.
func (c *cx) callOK(call wire.Call) map[string]any {
	p := c.exchange(wire.TypeCall, callPayload(call))
	o := c.want(p, wire.TypeResult)
	c.problems("a result {toolId, success:true, result} (docs/protocol/calls.md#results)", resultProblems(o, call.ToolID))
	return o
}

// callQuietly runs call and reports whether it succeeded, without touching any check.
func (r *run) callQuietly(ctx context.Context, call wire.Call) bool {
	id := r.newRequestID()
	raw := r.envelope(wire.TypeCall, id, callPayload(call))
	if r.send(ctx, id, wire.TypeCall, r.target.SessionID(), raw, false) != nil {
		return false
	}
	p, err := r.await(ctx, r.matchReply(id))
	if err != nil {
		return false
	}
	r.sent[id].answered = true
	return p.typ() == wire.TypeResult
}

// resultProblems checks a tool.result payload.
func resultProblems(o map[string]any, toolID string) []string {
	var list []string
	if o["toolId"] != toolID {
		list = append(list, fmt.Sprintf("toolId is %s, want %q", describe(o["toolId"]), toolID))
	}
	if o["success"] != true {
		list = append(list, fmt.Sprintf("success is %s, want true", describe(o["success"])))
	}
	if m, ok := o["message"]; ok && m != nil {
		if _, ok := m.(string); !ok {
			list = append(list, fmt.Sprintf("message is %s", describe(m)))
		}
	}
	if e, ok := o["evidence"]; ok && e != nil {
		ev, ok := e.(map[string]any)
		if !ok {
			list = append(list, fmt.Sprintf("evidence is %s", describe(e)))
		}
		for _, name := range keysOf(ev) {
			list = append(list, outcomeProblems(ev[name], "evidence."+name)...)
		}
	}
	return list
}

// outcomeProblems checks an outcome object (evidence, batch item).
func outcomeProblems(v any, at string) []string {
	o, ok := v.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s is %s, want an outcome object", at, describe(v))}
	}
	switch o["success"] {
	case true:
		if _, ok := o["toolId"].(string); !ok {
			return []string{at + ": a successful outcome needs toolId"}
		}
		return nil
	case false:
		e, ok := o["error"].(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: a failed outcome needs error {code, message, retryable}, got %s", at, describe(o["error"]))}
		}
		return errorShape(e, at+".error.")
	}
	return []string{fmt.Sprintf("%s.success is %s", at, describe(o["success"]))}
}

func checkCallResult(c *cx) {
	call := c.readCall()
	o := c.callOK(call)
	if _, ok := o["result"]; !ok {
		c.notef("the result member is absent (null result)")
	}
}

func checkCallArgumentsDefault(c *cx) {
	call := c.readCall()
	if string(call.Arguments) != "{}" && len(call.Arguments) != 0 {
		c.skipf("the read call has arguments; {} may not be valid for it")
	}
	for _, payload := range []string{js(map[string]any{"toolId": call.ToolID}), js(map[string]any{"toolId": call.ToolID, "arguments": nil})} {
		p := c.exchange(wire.TypeCall, payload)
		o := c.want(p, wire.TypeResult)
		c.problems("a successful result (docs/protocol/calls.md#call: absent/null arguments ⇒ {})", resultProblems(o, call.ToolID))
	}
}

func checkCallUnknownTool(c *cx) {
	id := "conformance.no_such_tool_" + randomHex(3)
	p := c.exchange(wire.TypeCall, js(map[string]any{"toolId": id, "arguments": map[string]any{}}))
	if o := c.wantError(p, wire.CodeNotFound); o["retryable"] != false {
		c.expectf("retryable:false", "retryable is %v", o["retryable"])
	}
}

func checkCallMissingID(c *cx) {
	for _, payload := range []string{`{"arguments":{}}`, `{"toolId":"","arguments":{}}`, `{"toolId":"   "}`} {
		c.wantError(c.exchange(wire.TypeCall, payload), wire.CodeCallMissingID)
	}
}

func checkCallPayloadNotObject(c *cx) {
	for _, payload := range []string{`[{"toolId":"x"}]`, `"x"`, `7`, `null`} {
		c.wantError(c.exchange(wire.TypeCall, payload), wire.CodeCallPayloadInvalid)
	}
}

func checkCallArgumentsNotObject(c *cx) {
	t := c.refusable("that is executable", func(t *toolView) bool { return t.executable })
	for _, args := range []string{`[1]`, `"x"`, `3`, `true`} {
		c.wantError(c.exchange(wire.TypeCall, `{"toolId":`+js(t.id)+`,"arguments":`+args+`}`), wire.CodeArgumentsInvalid)
	}
}

// closedSchema reports whether a JSON tool's arguments schema refuses unknown properties.
func closedSchema(t *toolView) bool {
	if t.encoding == wire.ArgumentEncodingFlattenedString || t.args == nil {
		return false
	}
	ap, present := t.args["additionalProperties"]
	return !present || ap == false
}

func checkCallArgumentsSchema(c *cx) {
	t := c.refusable("that is executable with a closed JSON arguments schema", func(t *toolView) bool {
		return t.executable && closedSchema(t)
	})
	p := c.exchange(wire.TypeCall, js(map[string]any{"toolId": t.id, "arguments": map[string]any{"conformanceUnexpectedProperty": 1}}))
	o := c.wantError(p, wire.CodeArgumentsSchemaInvalid)
	d, _ := o["details"].(map[string]any)
	errs, ok := d["errors"].([]any)
	if !ok || len(errs) == 0 {
		c.expectf("details.errors: a non-empty array of {path, code, message}", "details is %v", o["details"])
	}
	for i, x := range errs {
		e, _ := x.(map[string]any)
		for _, k := range []string{"path", "code", "message"} {
			if s, ok := e[k].(string); !ok || s == "" {
				c.expectf("details.errors[] of {path, code, message} strings", "details.errors[%d].%s is %s", i, k, describe(e[k]))
			}
		}
	}
}

func checkCallOrderLookup(c *cx) {
	p := c.exchange(wire.TypeCall, `{"toolId":"conformance.no_such_tool","arguments":[1]}`)
	c.wantError(p, wire.CodeNotFound)
}

func checkCallUnavailable(c *cx) {
	t := c.refusable("that is unavailable", func(t *toolView) bool { return !t.available() })
	code, _ := t.runtime["code"].(string)
	codes := []wire.Code{wire.CodeUnavailable}
	if code != "" {
		codes = []wire.Code{wire.Code(code)}
	}
	for _, args := range []string{`{}`, `[1]`} {
		p := c.exchange(wire.TypeCall, `{"toolId":`+js(t.id)+`,"arguments":`+args+`}`)
		o := c.wantError(p, codes...)
		if d, _ := o["details"].(map[string]any); !sameRuntime(d, t.runtime) {
			c.expectf("details = the tool's runtime object (docs/protocol/calls.md#processing-order)", "details %v, runtime %v", o["details"], t.runtime)
		}
		if want := t.runtime["retryable"] == true; o["retryable"] != want {
			c.expectf("retryable as the runtime says", "retryable %v, runtime.retryable %v", o["retryable"], t.runtime["retryable"])
		}
	}
}

func checkCallGuardDenied(c *cx) {
	t := c.refusable("that is available but not executable (a guard with execution off)", func(t *toolView) bool {
		return t.available() && !t.executable
	})
	c.wantError(c.exchange(wire.TypeCall, js(map[string]any{"toolId": t.id, "arguments": map[string]any{}})), wire.CodeExecutionDenied)
}

func checkCallAfterBounds(c *cx) {
	t := c.refusable("that is executable with all arguments optional", func(t *toolView) bool {
		return t.executable && len(required(t.args)) == 0 && !c.r.special(t.id)
	})
	for _, after := range []string{
		`{"include":["visualTree"],"delayMilliseconds":2001}`,
		`{"delayMilliseconds":-1}`,
		`{"include":"visualTree"}`,
		`{"include":["visualTree","conformanceUnknownEvidence"]}`,
	} {
		p := c.exchange(wire.TypeCall, `{"toolId":`+js(t.id)+`,"arguments":{},"after":`+after+`}`)
		c.wantError(p, wire.CodeCallPayloadInvalid)
	}
}

// evidenceTool returns the evidence tool with id when it is executable.
func (c *cx) evidenceTool(id string) *toolView {
	t := c.catalog().byID[id]
	if t == nil || !t.executable || t.policy != wire.PolicyRead {
		c.skipf("the app has no executable read tool %s to capture evidence", id)
	}
	return t
}

func checkCallAfterEvidence(c *cx) {
	c.evidenceTool(wire.VisualTreeToolID)
	call := c.readCall()
	if call.ToolID == wire.VisualTreeToolID {
		c.skipf("the only read call is the evidence tool itself")
	}
	for _, k := range []struct {
		after string
		names []string // accepted keys of the evidence
	}{
		{`{}`, []string{"visualTree"}},
		{`{"include":["visualTree"],"delayMilliseconds":1}`, []string{"visualTree"}},
		{`{"include":["tree"]}`, []string{"tree", "visualTree"}},
		{`{"include":["visual_tree"],"delayMilliseconds":0}`, []string{"visual_tree", "visualTree"}},
	} {
		p := c.exchange(wire.TypeCall, `{"toolId":`+js(call.ToolID)+`,"arguments":`+args(call)+`,"after":`+k.after+`}`)
		o := c.want(p, wire.TypeResult)
		c.problems("a successful result with evidence (docs/protocol/calls.md#evidence)", resultProblems(o, call.ToolID))
		ev, _ := o["evidence"].(map[string]any)
		var got map[string]any
		for _, n := range k.names {
			if e, ok := ev[n].(map[string]any); ok {
				got = e
			}
		}
		if got == nil {
			c.expectf(fmt.Sprintf("evidence under %q", k.names[0]), "evidence is %v", o["evidence"])
		}
		if got["toolId"] != wire.VisualTreeToolID || got["success"] != true {
			c.expectf("a successful "+wire.VisualTreeToolID+" outcome", "evidence outcome %v", got)
		}
	}
}

func args(call wire.Call) string {
	if len(call.Arguments) == 0 {
		return "{}"
	}
	return string(call.Arguments)
}

func checkCallEvidenceFailure(c *cx) {
	t := c.evidenceTool(wire.VisualTreeToolID)
	if !closedSchema(t) {
		c.skipf("%s does not validate its arguments against a closed schema, so its evidence cannot be made to fail", t.id)
	}
	call := c.readCall()
	if call.ToolID == t.id {
		c.skipf("the only read call is the evidence tool itself")
	}
	p := c.exchange(wire.TypeCall, `{"toolId":`+js(call.ToolID)+`,"arguments":`+args(call)+
		`,"after":{"include":["visualTree"],"visualTreeArguments":{"conformanceUnexpectedProperty":1}}}`)
	o := c.want(p, wire.TypeResult)
	if o["success"] != true {
		c.expectf("the call succeeds although its evidence failed", "success %v", o["success"])
	}
	ev, _ := o["evidence"].(map[string]any)
	e, _ := ev["visualTree"].(map[string]any)
	c.problems("an evidence outcome", outcomeProblems(e, "evidence.visualTree"))
	if e["success"] != false {
		c.expectf("evidence.visualTree {success:false, error:{code:tool_arguments_schema_invalid…}}", "evidence.visualTree is %v", e)
	}
	if er, _ := e["error"].(map[string]any); er["code"] != string(wire.CodeArgumentsSchemaInvalid) {
		c.expectf("the evidence error tool_arguments_schema_invalid", "error %v", er)
	}
}
