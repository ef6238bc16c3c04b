package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/internal/jsonscan"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// HandleMessage consumes one inbound message and reports whether it belonged to this
// client: a tool response (tool.catalog, tool.result, tool.batch.result, tool.error with
// capability tool.exec) or an ASFT frame. Other messages (control, telemetry) are left to the
// caller. Responses to unknown requests, duplicates and malformed input are dropped and
// counted, never fatal. The host calls it from the connection's single reader goroutine:
// transfers announced in a response are registered before HandleMessage returns, so the
// frames that follow find them. A call's result may keep data's bytes (CallResult.Raw
// and Payload.Result of an uncompressed payload are pieces of it): data must not be
// modified afterwards.
func (c *Client) HandleMessage(typ transport.MessageType, data []byte) bool {
	switch typ {
	case transport.MessageText:
		return c.handleText(data)
	case transport.MessageBinary:
		if !wire.IsASFT(data) {
			return false
		}
		c.transfers.handleFrame(data)
		return true
	}
	return false
}

func (c *Client) handleText(data []byte) bool {
	if !wire.IsResponse(peekType(data)) {
		return false
	}
	log := c.opts.Logger
	// A tool.result in its common form is decoded in the envelope's pass, which makes no
	// string of the envelope's ids: replyTo is looked up as bytes.
	var result wire.Result
	env, replyTo, decoded, err := wire.DecodeResponseInto(data, &result)
	if err != nil {
		h := peekHead(data, true)
		if !isToolCapability(h) {
			return false
		}
		c.malformed.Add(1)
		log.Debug("tools: malformed response envelope", "type", h.typ, "replyTo", h.replyTo, "err", err)
		if p := c.claim(h.replyTo); p != nil {
			p.ch <- response{err: &TransportError{Op: p.op, RequestID: p.id, Err: protocolError("response envelope", err)}}
		}
		return true
	}
	if env.Capability != "" && env.Capability != wire.CapabilityToolExec {
		return false
	}
	p := c.claimBytes(replyTo)
	if p == nil {
		if g, ok := c.lateAnswer(string(replyTo)); ok { // not the common path: a string is fine
			c.late.Add(1)
			log.Info("tools: dropped a late answer to a request given up on", "type", env.Type, "replyTo", string(replyTo),
				"request", g.op, "subject", g.subject, "late", time.Since(g.at).Round(time.Millisecond))
			return true
		}
		c.unmatched.Add(1)
		if log.Enabled(context.Background(), slog.LevelDebug) {
			h := peekHead(data, true)
			log.Debug("tools: dropped response to no request in flight", "type", env.Type, "id", h.id, "replyTo", string(replyTo))
		}
		return true
	}
	var decodedResult *wire.Result
	if decoded {
		decodedResult = &result
	}
	r := c.decodeResponse(p, &env, decodedResult)
	c.trafficResponse(p, &env, len(data), &r)
	if r.err != nil {
		if _, ok := r.err.(*TransportError); ok {
			c.malformed.Add(1)
			log.Debug("tools: malformed response", "type", env.Type, "replyTo", p.id, "err", r.err)
		}
	}
	p.ch <- r
	return true
}

var errNoPayload = errors.New("payload missing")

// decodeResponse reads a response payload for p; decoded is the tool.result payload when
// DecodeEnvelopeInto decoded it already. For results it registers the announced
// transfers, so that the frames following this message are accepted.
func (c *Client) decodeResponse(p *pending, env *wire.Envelope, decoded *wire.Result) response {
	fail := func(what string, err error) response {
		return response{err: &TransportError{Op: p.op, RequestID: p.id, Err: protocolError(what, err)}}
	}
	if len(env.Payload) == 0 {
		return fail(env.Type, errNoPayload)
	}
	if env.Type == wire.TypeError {
		var e wire.Error
		payload, err := wire.UnmarshalPayload(env.Payload, c.opts.MaxInflatedBytes, &e)
		if err != nil {
			return fail("tool.error payload", err)
		}
		if e.Code == "" {
			e.Code = legacyErrorCode(payload) // an older Kotlin runtime
		}
		if e.Code == "" {
			return fail("tool.error payload", errors.New("code missing"))
		}
		return response{typ: env.Type, payload: payload, err: &e}
	}
	if want := expectedType(p.op); env.Type != want {
		return fail(fmt.Sprintf("%s answers %s (want %s)", env.Type, p.op, want), nil)
	}
	// One strict pass decodes the (inflated) payload into its type.
	r := response{typ: env.Type}
	var v any
	var payload []byte
	var err error
	switch env.Type {
	case wire.TypeCatalog:
		if err := c.answers.decode(p.query, env.Payload, c.opts.MaxInflatedBytes, &r); err != nil {
			// An entry the strict decoder refuses (an unknown policy) is skipped, not the
			// whole catalog; such an answer is never kept for repeats.
			payload, ok := c.lenient(env, &r)
			if !ok {
				return fail(env.Type+" payload", err)
			}
			r.payload = payload
		}
		return r
	case wire.TypeResult:
		// Decoded in place (Call returns it), its result sharing the payload's bytes:
		// Call returns the payload too, as Raw.
		r.result = new(CallResult)
		if decoded != nil {
			r.result.Payload, payload = *decoded, env.Payload
		} else {
			payload, err = wire.UnmarshalResultPayload(env.Payload, c.opts.MaxInflatedBytes, &r.result.Payload)
		}
	case wire.TypeBatchResult:
		r.batch = new(wire.BatchResult)
		v = r.batch
	}
	if v != nil {
		payload, err = wire.UnmarshalPayload(env.Payload, c.opts.MaxInflatedBytes, v)
	}
	if err != nil {
		var ok bool
		if payload, ok = c.lenient(env, &r); !ok {
			return fail(env.Type+" payload", err)
		}
	}
	if r.batch != nil {
		fillLegacyItemCodes(r.batch, payload)
	}
	r.payload = payload
	r.descs, err = findDescriptors(payload)
	if err != nil {
		return fail(env.Type+" payload", err)
	}
	if len(r.descs) > 0 {
		r.transfers = c.transfers.register(r.descs, progressOf(p.ctx))
	}
	return r
}

// lenient decodes a catalog or batch result the strict decoder refused with the readers
// of lenient.go, into r, and returns the payload to keep. ok is false when they refuse it
// too.
func (c *Client) lenient(env *wire.Envelope, r *response) (payload []byte, ok bool) {
	var raw jsontext.Value
	payload, err := wire.UnmarshalPayload(env.Payload, c.opts.MaxInflatedBytes, &raw)
	if err != nil {
		return nil, false
	}
	switch env.Type {
	case wire.TypeCatalog:
		r.catalog, payload, ok = lenientCatalog(payload, c.opts.Logger)
	case wire.TypeBatchResult:
		r.batch, ok = lenientBatchResult(payload)
	}
	return payload, ok
}

// head is what peekHead reads from a text message's top-level object.
type head struct {
	typ, replyTo, capability, id string
}

// isToolCapability: an absent, null or blank capability means tool.exec; any other value
// is not a tool message.
func isToolCapability(h head) bool {
	return h.capability == "" || h.capability == wire.CapabilityToolExec
}

// peekType returns the top-level type string of a JSON object, as peekHead does. When the
// message starts with its type (every SDK writes it first) and that is a tool response
// type, it is read off the first bytes: routing a message then costs no decoder.
func peekType(data []byte) string {
	const prefix = `{"type":"`
	if rest, ok := bytes.CutPrefix(data, []byte(prefix)); ok {
		for _, t := range responseTypes {
			if len(rest) > len(t) && rest[len(t)] == '"' && string(rest[:len(t)]) == t {
				return t
			}
		}
	}
	return peekHead(data, false).typ
}

var responseTypes = [...]string{wire.TypeResult, wire.TypeCatalog, wire.TypeBatchResult, wire.TypeError}

// headNames are the members peekHead reads, in head's order.
var headNames = []string{"type", "replyTo", "capability", "id"}

// peekHead reads the top-level type (and, when full, replyTo and capability) strings of a
// JSON object without strictness (jsonscan.TopStrings): only to route the message and,
// when the strict decoder refuses it, to fail the request it answers. Without full it stops
// at "type", usually the first member. Anything unreadable yields a zero head.
func peekHead(data []byte, full bool) head {
	var v [4]string
	jsonscan.TopStrings(data, headNames, v[:], func(i int) bool {
		return i == 0 && (!full || !wire.IsResponse(v[0])) // routed; the rest does not matter
	})
	return head{typ: v[0], replyTo: v[1], capability: v[2], id: v[3]}
}
