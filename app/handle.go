package app

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/internal/bpool"
	"github.com/ansight-go/ansight/internal/jsonscan"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// request is a text message that claims to be a tool request.
type request struct {
	env wire.Envelope // zero when the message could not be decoded (err set)
	// call is a tool.call's payload when the envelope's pass decoded it (decoded set).
	call    wire.Call
	decoded bool
	// id and sessionID are what could be read of an undecodable message; err says why it
	// could not be decoded.
	id, sessionID string
	err           error
}

// Handle answers one inbound text message if it is a tool request: it writes the response
// through w and then streams the ASFT frames of the transfers that response announces. It
// reports false, without writing, for any other message — a message that is not a JSON
// object with a tool request type (tool.query, tool.call, tool.batch), or that names
// another capability than tool.exec. The error is w's.
//
// Serve uses Handle for every request; call it directly to answer requests that arrive
// some other way (tests, in-process bridges). msg must not be modified during the call.
func (a *App) Handle(ctx context.Context, msg []byte, w MessageWriter) (bool, error) {
	req, ok := classify(msg)
	if !ok {
		return false, nil
	}
	return true, a.answer(ctx, &req, w)
}

// classify decides whether msg is a tool request, and decodes it.
func classify(msg []byte) (request, bool) {
	var call wire.Call
	env, decoded, err := wire.DecodeEnvelopeInto(msg, &call, nil)
	if err == nil {
		if !wire.IsRequest(env.Type) || !toolCapability(env.Capability) {
			return request{}, false
		}
		return request{env: env, call: call, decoded: decoded}, true
	}
	// The message is not a valid envelope. It is still ours if it claims a tool request
	// type: then it gets tool_protocol_invalid_request, correlated when its id is readable.
	c := scanClaim(msg)
	if !wire.IsRequest(c.typ) || !toolCapability(c.capability) {
		return request{}, false
	}
	if strings.TrimSpace(c.id) == "" {
		c.id = "" // a blank id is no id: the answer gets a fresh one and no replyTo
	}
	return request{id: c.id, sessionID: c.sessionID, err: err}, true
}

// toolCapability reports whether an envelope's capability addresses the tool protocol:
// tool.exec, or none (absent, null or blank, as the reference SDK reads it).
func toolCapability(c string) bool { return c == "" || c == wire.CapabilityToolExec }

// claim is what a lenient scan reads from the top level of a message.
type claim struct {
	typ, id, sessionID, capability string
}

// claimNames are the members scanClaim reads, in claim's order.
var claimNames = []string{"type", "id", "sessionId", "capability"}

// scanClaim reads the top-level type, id, sessionId and capability strings of msg without
// the strict rules (jsonscan.TopStrings: the first occurrence of a name counts), to tell
// whether an undecodable message claims to be a tool request.
func scanClaim(msg []byte) claim {
	var v [4]string
	jsonscan.TopStrings(msg, claimNames, v[:], nil)
	return claim{typ: v[0], id: v[1], sessionID: v[2], capability: v[3]}
}

// answer computes the response to req, writes it and streams the transfers it announces.
func (a *App) answer(ctx context.Context, req *request, w MessageWriter) error {
	var start time.Time // for the debug log only: reading the clock is not free
	logged := a.log.Enabled(ctx, slog.LevelDebug)
	if logged {
		start = time.Now()
	}
	x := &exchange{app: a, requestID: req.id, sessionID: req.sessionID}
	if req.err == nil {
		x.requestID, x.sessionID = req.env.ID, req.env.SessionID
	}
	typ, payload, failure := x.compute(ctx, req)
	if errors.Is(context.Cause(ctx), ErrCancelled) {
		// The host gave the request up (tool.cancel): it has forgotten the id.
		x.dropTransfers()
		x.release()
		return nil
	}
	if failure != nil {
		x.dropTransfers()
		typ, payload, x.encoded = wire.TypeError, marshalError(failure), false
	}
	msg, err := a.respond(x.requestID, x.sessionID, typ, payload, x.encoded)
	x.release() // the payload, and the results in it, are in msg now

	if err != nil { // only a bug gets here (the payload is our own JSON): tell the host anyway
		a.log.ErrorContext(ctx, "encoding a response failed", "request", x.requestID, "err", err)
		x.dropTransfers()
		failure = &wire.Error{Code: wire.CodeExecutionException, Message: "The response could not be encoded."}
		typ = wire.TypeError
		if msg, err = a.respond(x.requestID, x.sessionID, typ, marshalError(failure), false); err != nil {
			return err
		}
	}
	if logged {
		attrs := []slog.Attr{slog.String("type", typ), slog.String("request", x.requestID), slog.Int("bytes", len(*msg)), slog.Duration("took", time.Since(start))}
		if failure != nil {
			attrs = append(attrs, slog.String("code", string(failure.Code)))
		}
		a.log.LogAttrs(ctx, slog.LevelDebug, "tool response", attrs...)
	}
	err = w.Write(ctx, transport.MessageText, *msg)
	responseBuffers.Put(msg)
	if err != nil {
		x.dropTransfers()
		return err
	}
	for i, t := range x.transfers {
		if err := t.stream(ctx, w); err != nil {
			for _, rest := range x.transfers[i+1:] {
				rest.close()
			}
			return err
		}
	}
	return nil
}

// compute returns the response type and payload for req, or a failure for the whole
// request. Tool panics are handled per call; this recover is the last line of defence
// (a bug in the runtime itself must not crash the app either).
func (x *exchange) compute(ctx context.Context, req *request) (typ string, payload []byte, failure *wire.Error) {
	defer func() {
		if r := recover(); r != nil {
			x.app.log.LogAttrs(ctx, slog.LevelError, "answering a tool request panicked", slog.String("request", x.requestID),
				slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
			typ, payload = "", nil
			failure = &wire.Error{Code: wire.CodeExecutionException, Message: "The app failed to answer this request; it keeps running."}
		}
	}()
	if req.err != nil {
		return "", nil, &wire.Error{Code: wire.CodeProtocolInvalidRequest, Message: "The tool request could not be read: " + req.err.Error()}
	}
	if req.decoded { // a tool.call whose payload the envelope's pass decoded
		if perr := checkCall(&req.call); perr != nil {
			return "", nil, perr
		}
		return x.respondCall(x.run(ctx, req.call, true))
	}
	body, err := requestPayload(req.env.Payload)
	if err != nil {
		return "", nil, &wire.Error{Code: wire.CodeProtocolInvalidRequest, Message: "The tool request payload could not be decoded: " + err.Error()}
	}
	return x.dispatch(ctx, req.env.Type, body)
}

// dispatch answers a decoded request by type with the response type and payload, or a
// failure for the whole request.
func (x *exchange) dispatch(ctx context.Context, typ string, payload jsontext.Value) (string, []byte, *wire.Error) {
	switch typ {
	case wire.TypeQuery:
		out, failure := x.query(ctx, payload)
		return wire.TypeCatalog, out, failure
	case wire.TypeCall:
		out, _ := x.call(ctx, payload, true)
		return x.respondCall(out)
	default: // wire.TypeBatch; classify admits request types only
		res, failure := x.batch(ctx, payload)
		if failure != nil {
			return "", nil, failure
		}
		b, err := wire.Marshal(res)
		if err != nil {
			x.dropTransfers()
			return "", nil, &wire.Error{Code: wire.CodeExecutionException, Message: "The batch result could not be encoded."}
		}
		return wire.TypeBatchResult, b, nil
	}
}

// respondCall returns the response to a tool.call whose outcome is out.
func (x *exchange) respondCall(out wire.Outcome) (string, []byte, *wire.Error) {
	if !out.Success {
		return "", nil, out.Error
	}
	x.scratch = responseBuffers.Get()
	b, err := resultPayload((*x.scratch)[:0], &out)
	if err != nil {
		x.dropTransfers()
		return "", nil, &wire.Error{Code: wire.CodeExecutionException, Message: "The result could not be encoded."}
	}
	*x.scratch = b[:0] // keep a grown buffer for the pool
	return wire.TypeResult, b, nil
}

// resultPayload appends to dst the tool.result payload of a successful outcome, members
// in the order of wire.Result: toolId, success, message, result, evidence. The result is already
// compact, valid JSON (encodeResult made it so), so it is copied in rather than
// re-encoded — for a large result that saves a full pass over it.
func resultPayload(dst []byte, out *wire.Outcome) ([]byte, error) {
	var evidence []byte
	if out.Evidence != nil {
		var err error
		if evidence, err = wire.Marshal(out.Evidence); err != nil {
			return nil, err
		}
	}
	b := slices.Grow(dst, len(out.ToolID)+len(out.Message)+len(out.Result)+len(evidence)+64)
	b = append(b, `{"toolId":`...)
	b, err := jsontext.AppendQuote(b, out.ToolID)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"success":true`...)
	if out.Message != "" {
		b = append(b, `,"message":`...)
		if b, err = jsontext.AppendQuote(b, out.Message); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"result":`...)
	b = append(b, out.Result...)
	if evidence != nil {
		b = append(b, `,"evidence":`...)
		b = append(b, evidence...)
	}
	return append(b, '}'), nil
}

// dropTransfers releases the transfers of a response that will not be sent.
func (x *exchange) dropTransfers() {
	for _, t := range x.transfers {
		t.close()
	}
	x.transfers = nil
}

// requestPayload unwraps a compressed request payload (hosts should not compress
// requests, but the SDK accepts it); an absent payload stays empty.
func requestPayload(raw jsontext.Value) (jsontext.Value, error) {
	if len(raw) == 0 {
		return raw, nil
	}
	return wire.DecodePayload(raw, wire.DefaultMaxInflatedBytes)
}

// marshalError encodes an error payload.
func marshalError(e *wire.Error) []byte {
	b, err := wire.Marshal(e)
	if err != nil { // a tool's message with invalid UTF-8, say: say less
		b, _ = wire.Marshal(&wire.Error{Code: e.Code, Message: "The error message could not be encoded.", Retryable: e.Retryable})
	}
	return b
}

// respond builds the response envelope around a compact payload, compressing the payload
// when it is large (docs/protocol/messages.md#encoding-a-payload) unless it is encoded
// already. An empty requestID means the request's id was unreadable:
// the response gets a fresh tool.error.<hex> id and no replyTo.
func (a *App) respond(requestID, sessionID, typ string, payload []byte, encoded bool) (*[]byte, error) {
	p, err := payload, error(nil)
	if !encoded {
		if p, err = wire.EncodePayload(payload); err != nil {
			return nil, err
		}
	}
	env := wire.Envelope{
		Type:       typ,
		ReplyTo:    requestID,
		SessionID:  sessionID,
		SentAt:     a.clock().UTC(),
		Capability: wire.CapabilityToolExec,
		Payload:    p,
	}
	buf := responseBuffers.Get()
	if requestID == "" {
		env.ID = "tool.error." + a.newID()
		*buf, err = wire.AppendEnvelope((*buf)[:0], &env)
	} else {
		*buf, err = wire.AppendResponse((*buf)[:0], &env) // id wire.ResponseID(requestID)
	}
	if err != nil {
		responseBuffers.Put(buf)
		return nil, err
	}
	return buf, nil
}

// responseBuffers recycles the buffers responses are assembled in (Write does not keep
// them), up to 1 MiB.
var responseBuffers = bpool.New(1024, 1<<20)
