package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/schema"
	"github.com/ansight-go/ansight/wire"
)

// exchange is the state of answering one request: the request's identity, which handlers
// see in their Call, and the transfers its response announces.
type exchange struct {
	app       *App
	requestID string
	sessionID string
	transfers []*transfer
	scratch   *[]byte // the pooled buffer the response payload was built in, if any
	// results is the pooled buffer the handlers' results are encoded into (encodeResult):
	// they live only until the response is built, which copies them.
	results *[]byte
	encoded bool // the response payload is encoded for the wire already (a catalog)
}

// resultBuffer returns the exchange's results buffer, taken from the pool on first use;
// answer puts it back once the response is built.
func (x *exchange) resultBuffer() *[]byte {
	if x.results == nil {
		x.results = responseBuffers.Get()
	}
	return x.results
}

// release puts the exchange's pooled buffers back: its response is built (or dropped),
// and nothing refers to them any more.
func (x *exchange) release() {
	if x.scratch != nil {
		responseBuffers.Put(x.scratch)
	}
	if x.results != nil {
		responseBuffers.Put(x.results)
	}
	x.scratch, x.results = nil, nil
}

// parseCall reads a tool.call payload or a batch item: the shape checks that come before
// anything runs (docs/protocol/calls.md#processing-order), the after block included. On failure it still returns the
// toolId and callId it could read, for the batch listing.
func parseCall(raw jsontext.Value) (wire.Call, *wire.Error) {
	if raw.Kind() != '{' {
		return wire.Call{}, &wire.Error{Code: wire.CodeCallPayloadInvalid, Message: "The tool.call payload must be a JSON object."}
	}
	c, err := wire.UnmarshalCall(raw)
	if err != nil {
		c = readableCall(raw)
		return c, &wire.Error{Code: wire.CodeCallPayloadInvalid, Message: "The tool.call payload is invalid: " + err.Error()}
	}
	return c, checkCall(&c)
}

// checkCall makes parseCall's checks of a decoded call: a toolId, a valid after block.
func checkCall(c *wire.Call) *wire.Error {
	if strings.TrimSpace(c.ToolID) == "" {
		return &wire.Error{Code: wire.CodeCallMissingID, Message: "The tool.call payload has no toolId."}
	}
	if c.After != nil {
		return checkAfter(c.After)
	}
	return nil
}

// readableCall extracts toolId and callId from a call payload that does not decode as a
// whole (say, after holds a string), when they are strings.
func readableCall(raw jsontext.Value) wire.Call {
	var loose struct {
		ToolID jsontext.Value `json:"toolId"`
		CallID jsontext.Value `json:"callId"`
	}
	var c wire.Call
	if wire.Unmarshal(raw, &loose) == nil {
		_ = wire.Unmarshal(loose.ToolID, &c.ToolID)
		_ = wire.Unmarshal(loose.CallID, &c.CallID)
	}
	return c
}

// checkAfter validates an after block before the tool runs, so that a mutating tool never
// runs and then fails on its evidence request.
func checkAfter(a *wire.After) *wire.Error {
	bad := func(format string, args ...any) *wire.Error {
		return &wire.Error{Code: wire.CodeCallPayloadInvalid, Message: "The after block is invalid: " + fmt.Sprintf(format, args...)}
	}
	for _, name := range a.Include {
		if _, ok := evidenceTool(name); !ok {
			return bad("unknown evidence %q (want visualTree, tree, visual_tree or screenshot).", name)
		}
	}
	if a.DelayMilliseconds < 0 || a.DelayMilliseconds > wire.MaxAfterDelayMilliseconds {
		return bad("delayMilliseconds %d is outside 0..%d.", a.DelayMilliseconds, wire.MaxAfterDelayMilliseconds)
	}
	if k := a.VisualTreeArguments.Kind(); k != 0 && k != 'n' && k != '{' {
		return bad("visualTreeArguments must be a JSON object.")
	}
	if k := a.ScreenshotArguments.Kind(); k != 0 && k != 'n' && k != '{' {
		return bad("screenshotArguments must be a JSON object.")
	}
	return nil
}

// call runs one call payload (a tool.call payload or a batch item) through the whole path
// of docs/protocol/calls.md#processing-order and returns its outcome and the caller's callId.
func (x *exchange) call(ctx context.Context, raw jsontext.Value, withEvidence bool) (wire.Outcome, string) {
	c, perr := parseCall(raw)
	if perr != nil {
		return wire.Outcome{ToolID: c.ToolID, Error: perr}, c.CallID
	}
	return x.run(ctx, c, withEvidence), c.CallID
}

// run executes a parsed call: lookup → guard → availability → arguments → schema →
// execution → result schema → evidence.
func (x *exchange) run(ctx context.Context, c wire.Call, withEvidence bool) wire.Outcome {
	a := x.app
	fail := func(e *wire.Error) wire.Outcome { return wire.Outcome{ToolID: c.ToolID, Error: e} }

	t, g := a.lookup(c.ToolID)
	if t == nil {
		return fail(&wire.Error{Code: wire.CodeNotFound, Message: fmt.Sprintf("Tool '%s' is not registered.", c.ToolID)})
	}
	if !g.Executable(t.cat.Def.Policy) {
		return fail(denied(g, t.cat.Def.Policy))
	}
	if rt := a.availabilityOf(ctx, t); !rt.Available {
		return fail(unavailable(c.ToolID, rt))
	}

	var args jsontext.Value
	switch c.Arguments.Kind() {
	case 0, 'n':
		args = jsontext.Value("{}")
	case '{':
		args = c.Arguments // the decoder's copy, not the message's bytes: the handler's own
		if !isCompact(args) {
			if err := args.Compact(); err != nil { // already checked by the strict decoder
				return fail(&wire.Error{Code: wire.CodeArgumentsInvalid, Message: "Tool arguments are not valid JSON."})
			}
		}
	default:
		return fail(&wire.Error{Code: wire.CodeArgumentsInvalid, Message: "Tool arguments must be a JSON object."})
	}
	call := &Call{ToolID: c.ToolID, CallID: c.CallID, RequestID: x.requestID, SessionID: x.sessionID, Arguments: args, app: a}
	if t.flattened {
		m, err := flatten(args)
		if err != nil {
			return fail(&wire.Error{Code: wire.CodeArgumentsInvalid, Message: "Tool arguments could not be flattened: " + err.Error()})
		}
		call.StringArguments = m
	} else if vs := t.cat.Args.Validate(args); len(vs) > 0 {
		return fail(schemaError(wire.CodeArgumentsSchemaInvalid, fmt.Sprintf("Arguments of tool '%s' do not match its schema.", c.ToolID), vs))
	}

	result, err := a.execute(ctx, t, call, x.resultBuffer())
	if err == nil && !t.flattened && (!t.resultConforms || string(result) == "null") {
		if vs := t.cat.Result.Validate(result); len(vs) > 0 {
			err = schemaError(wire.CodeResultSchemaInvalid, fmt.Sprintf("The result of tool '%s' does not match its schema.", c.ToolID), vs)
		}
	}
	if err != nil {
		call.finish(false, nil)
		return fail(toolFailure(c.ToolID, err))
	}
	x.transfers = append(x.transfers, call.finish(true, result)...)

	call.mu.Lock()
	out := wire.Outcome{ToolID: c.ToolID, Success: true, Message: call.message, Result: result}
	call.mu.Unlock()
	if withEvidence && c.After != nil {
		out.Evidence = x.evidence(ctx, c)
	}
	return out
}

// execute runs the handler — waiting for the exclusive slot if the tool needs it — and
// encodes its result, into *buf when it can (see encodeResult). A panic in the handler or
// in the result's marshalling becomes tool_execution_exception.
func (a *App) execute(ctx context.Context, t *tool, c *Call, buf *[]byte) (result jsontext.Value, err error) {
	if t.exclusive {
		select {
		case a.exclusive <- struct{}{}:
			defer func() { <-a.exclusive }()
		case <-ctx.Done():
			return nil, &wire.Error{Code: wire.CodeExecutionFailed, Message: fmt.Sprintf("Tool '%s' was cancelled while waiting for another exclusive tool.", c.ToolID), Retryable: true}
		}
	}
	defer func() {
		if r := recover(); r != nil {
			a.log.LogAttrs(ctx, slog.LevelError, "tool panicked", slog.String("tool", c.ToolID),
				slog.String("request", c.RequestID), slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
			result, err = nil, &wire.Error{Code: wire.CodeExecutionException, Message: fmt.Sprintf("Tool '%s' panicked: %s", c.ToolID, truncate(fmt.Sprint(r), 200))}
		}
	}()
	v, err := t.handler(ctx, c)
	if err != nil {
		return nil, err
	}
	return encodeResult(c.ToolID, v, t.resultEncoder, buf)
}

// isCompact reports whether the valid JSON value v holds no whitespace byte at all, so
// that compacting it would change nothing (whitespace inside a string is escaped in valid
// JSON, except for spaces: a string with a space makes this report false, which only
// costs a Compact).
func isCompact(v []byte) bool {
	for _, c := range v {
		if c == ' ' || c == '\n' || c == '\r' || c == '\t' {
			return false
		}
	}
	return true
}

// strictCompact compacts a handler's raw JSON with the strict rules the protocol's
// decoders apply: no duplicate names, valid UTF-8 (Compact alone allows both). What it
// returns goes into the response payload as is.
var strictCompact = []jsontext.Options{jsontext.AllowDuplicateNames(false), jsontext.AllowInvalidUTF8(false)}

// encodeResult turns a handler's result into compact, strictly valid JSON; flat is the
// typed tool's plan for its result type, if any. Raw JSON and flat results are appended
// to *buf, the exchange's pooled buffer, and returned as a piece of it (capped, so that
// an append to one cannot write over the next): no allocation of their own.
func encodeResult(toolID string, v any, flat *flatEncoder, buf *[]byte) (jsontext.Value, error) {
	start := len(*buf)
	switch v := v.(type) {
	case nil:
		return jsontext.Value("null"), nil
	case jsontext.Value:
		*buf = append(*buf, v...)
		out := jsontext.Value((*buf)[start:len(*buf):len(*buf)])
		if err := out.Compact(strictCompact...); err != nil {
			*buf = (*buf)[:start]
			return nil, &wire.Error{Code: wire.CodeExecutionFailed, Message: fmt.Sprintf("Tool '%s' returned invalid JSON: %v", toolID, err)}
		}
		return out, nil
	}
	if flat != nil {
		if b, ok := flat.appendJSON(*buf, v); ok {
			*buf = b
			return jsontext.Value(b[start:len(b):len(b)]), nil
		}
	}
	b, err := wire.Marshal(v)
	if err != nil {
		return nil, &wire.Error{Code: wire.CodeExecutionFailed, Message: fmt.Sprintf("The result of tool '%s' could not be encoded: %v", toolID, err)}
	}
	return b, nil
}

// availabilityOf evaluates a tool's availability function; a panicking one makes the tool
// unavailable rather than crashing the app.
func (a *App) availabilityOf(ctx context.Context, t *tool) (rt wire.Runtime) {
	if t.availability == nil {
		return wire.Runtime{Available: true}
	}
	defer func() {
		if r := recover(); r != nil {
			a.log.LogAttrs(ctx, slog.LevelError, "tool availability check panicked", slog.String("tool", t.cat.Def.ID),
				slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
			rt = wire.Runtime{Available: false, Code: wire.CodeUnavailable, Reason: "The tool's availability check failed."}
		}
	}()
	rt = t.availability(ctx)
	if rt.Available {
		return wire.Runtime{Available: true}
	}
	return rt
}

// denied is the tool_execution_denied error for a guard that refuses policy p.
func denied(g catalog.Guard, p wire.Policy) *wire.Error {
	msg := "Tool execution is disabled by the current guard."
	if g.ExecutionEnabled {
		msg = fmt.Sprintf("Tool policy '%s' exceeds the current maximum '%s'.", p, g.MaxPolicy)
	}
	return &wire.Error{Code: wire.CodeExecutionDenied, Message: msg}
}

// unavailable is the error for a call to an unavailable tool: the tool's own code (or
// tool_unavailable), its reason, its retryable flag, and the runtime object as details.
func unavailable(toolID string, rt wire.Runtime) *wire.Error {
	e := &wire.Error{Code: rt.Code, Message: rt.Reason, Retryable: rt.Retryable}
	if e.Code == "" {
		e.Code = wire.CodeUnavailable
	}
	if e.Message == "" {
		e.Message = fmt.Sprintf("Tool '%s' is not available in the current runtime state.", toolID)
	}
	if b, err := wire.Marshal(rt); err == nil {
		e.Details = b
	}
	return e
}

// schemaError is a schema failure with details {"errors":[{path,code,message}…]}.
func schemaError(code wire.Code, msg string, vs []schema.Violation) *wire.Error {
	e := &wire.Error{Code: code, Message: msg}
	if b, err := wire.Marshal(struct {
		Errors []schema.Violation `json:"errors"`
	}{vs}); err == nil {
		e.Details = b
	}
	return e
}

// toolFailure maps a handler's error to the error payload: a *wire.Error keeps its code,
// message, retryability and details; anything else is tool_execution_failed.
func toolFailure(toolID string, err error) *wire.Error {
	var we *wire.Error
	if errors.As(err, &we) && validCode(we.Code) {
		out := &wire.Error{Code: we.Code, Message: we.Message, Retryable: we.Retryable}
		if out.Message == "" {
			out.Message = fmt.Sprintf("Tool '%s' failed.", toolID)
		}
		if we.Details.Kind() == '{' && we.Details.IsValid() {
			out.Details = append(jsontext.Value(nil), we.Details...)
			_ = out.Details.Compact()
		}
		return out
	}
	msg := err.Error()
	if msg == "" {
		msg = fmt.Sprintf("Tool '%s' failed.", toolID)
	}
	return &wire.Error{Code: wire.CodeExecutionFailed, Message: msg}
}

// validCode reports whether code is a plausible error code: non-empty snake_case ASCII.
func validCode(code wire.Code) bool {
	if code == "" || len(code) > 128 {
		return false
	}
	for i := 0; i < len(code); i++ {
		c := code[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
