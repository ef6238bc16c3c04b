package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// run is the state of one suite run: what was sent, what came back, and what the app's
// catalog looks like.
type run struct {
	target Target
	opts   Options
	prefix string
	seq    int

	// sent holds every request of the run by id.
	sent map[string]*sent
	// responses holds every tool response received, in arrival order.
	responses []*response
	// unclaimed holds responses no check has taken yet (late, duplicate, unsolicited).
	unclaimed []*response
	// transfers holds every ASFT transfer announced by a response, by transfer id;
	// early holds frames of transfer ids no response had announced yet.
	transfers   map[string]*transfer
	early       map[string][]frameHead
	earlyFrames int
	frameLog    []string // frame-level violations, for final.asft_frames
	arrivals    int
	dead        error // the target failed for good

	// cat is the app's catalog as the suite first read it (nil until catalog.full ran).
	cat *catalogView
	// index, definitions and full are the payloads of those projections.
	index, definitions, full map[string]any
}

// sent is one request of the run.
type sent struct {
	id, typ, sessionID string
	raw                []byte
	// lenient marks requests whose answer may lack replyTo (unreadable ids).
	lenient  bool
	answered bool
}

// response is one tool response as received.
type response struct {
	raw []byte
	// at is the arrival order among all messages.
	at int
	// env is the strictly decoded envelope; err says why decoding failed (env is nil then).
	env *wire.Envelope
	err error
	// top holds the envelope's members as written, for checks on nulls and timestamps.
	top map[string]jsontext.Value
	// body is the payload after unwrapping; wrapped tells whether it was compressed.
	body    []byte
	wrapped bool
	// val is body decoded into maps, slices, strings, float64s, bools and nils.
	val any
}

// obj returns the payload as an object, or nil.
func (p *response) obj() map[string]any {
	m, _ := p.val.(map[string]any)
	return m
}

func (p *response) typ() string {
	if p.env == nil {
		return ""
	}
	return p.env.Type
}

func (p *response) replyTo() string {
	if p.env == nil {
		return ""
	}
	return p.env.ReplyTo
}

func newRun(target Target, opts Options) *run {
	return &run{
		target: target, opts: opts, prefix: "conform-" + randomHex(4),
		sent: map[string]*sent{}, transfers: map[string]*transfer{}, early: map[string][]frameHead{},
	}
}

// envelope builds a well-formed request.
func (r *run) envelope(typ, id string, payload string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"type":%q,"id":%q`, typ, id)
	if sid := r.target.SessionID(); sid != "" {
		fmt.Fprintf(&b, `,"sessionId":%q`, sid)
	}
	fmt.Fprintf(&b, `,"sentAt":%q,"capability":"tool.exec"`, time.Now().UTC().Format(time.RFC3339Nano))
	if payload != "" {
		b.WriteString(`,"payload":`)
		b.WriteString(payload)
	}
	b.WriteString("}")
	return []byte(b.String())
}

// send writes raw and records it as request id of type typ.
func (r *run) send(ctx context.Context, id, typ, sessionID string, raw []byte, lenient bool) error {
	r.sent[id] = &sent{id: id, typ: typ, sessionID: sessionID, raw: raw, lenient: lenient}
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	err := r.target.Send(ctx, raw)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		r.dead = err
	}
	return err
}

// await returns the first response, already received or arriving within the timeout,
// that match accepts. Responses it passes over stay unclaimed.
func (r *run) await(ctx context.Context, match func(*response) bool) (*response, error) {
	for i, p := range r.unclaimed {
		if match(p) {
			r.unclaimed = append(r.unclaimed[:i], r.unclaimed[i+1:]...)
			return p, nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	for {
		p, err := r.next(ctx)
		if err != nil {
			return nil, err
		}
		if p == nil {
			continue
		}
		if match(p) {
			return p, nil
		}
		r.unclaimed = append(r.unclaimed, p)
	}
}

// next receives one message and ingests it; it returns the response, or nil for a frame.
func (r *run) next(ctx context.Context) (*response, error) {
	m, err := r.target.Receive(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w within %s", errNoResponse, r.opts.Timeout)
		}
		r.dead = err
		return nil, err
	}
	r.arrivals++
	if m.Type == transport.MessageBinary {
		r.frame(m.Data)
		return nil, nil
	}
	p := r.parse(m.Data)
	r.responses = append(r.responses, p)
	r.announce(p)
	return p, nil
}

// parse reads one response message as the suite needs it.
func (r *run) parse(data []byte) *response {
	p := &response{raw: data, at: r.arrivals}
	env, err := wire.DecodeEnvelope(data)
	if err != nil {
		p.err = err
		return p
	}
	p.env = &env
	if err := wire.Unmarshal(data, &p.top); err != nil {
		p.env, p.err = nil, err
		return p
	}
	if len(p.env.Payload) == 0 {
		return p
	}
	body, wrapped, err := unwrapPayload(p.env.Payload)
	if err != nil {
		p.err = fmt.Errorf("payload: %w", err)
		return p
	}
	p.body, p.wrapped = body, wrapped
	if err := wire.Unmarshal(body, &p.val); err != nil {
		p.err = fmt.Errorf("payload: %w", err)
	}
	return p
}

// matchReply accepts the answer to request id: its replyTo, or — so that a wrong replyTo
// fails the check at once instead of timing out — a response with no known replyTo whose
// id follows the "<id>.response" convention.
func (r *run) matchReply(id string) func(*response) bool {
	return func(p *response) bool {
		if p.env == nil {
			return false
		}
		if p.env.ReplyTo == id {
			return true
		}
		if _, known := r.sent[p.env.ReplyTo]; known && p.env.ReplyTo != "" {
			return false
		}
		return p.env.ID == wire.ResponseID(id)
	}
}

// exchange sends a well-formed request and waits for its answer.
func (c *cx) exchange(typ, payload string) *response {
	id := c.r.newRequestID()
	return c.roundTrip(id, typ, c.r.target.SessionID(), c.r.envelope(typ, id, payload), false)
}

// roundTrip sends raw as request id and waits for its answer (for lenient requests, also
// a tool.error without replyTo). It fails the check when no answer comes.
func (c *cx) roundTrip(id, typ, sessionID string, raw []byte, lenient bool) *response {
	c.last = &Exchange{Request: shorten(raw)}
	if err := c.r.send(c.ctx, id, typ, sessionID, raw, lenient); err != nil {
		c.failf("sending the request failed: %v", err)
	}
	match := c.r.matchReply(id)
	if lenient {
		strict := match
		match = func(p *response) bool {
			return strict(p) || (p.env != nil && p.env.Type == wire.TypeError && p.env.ReplyTo == "")
		}
	}
	p, err := c.r.await(c.ctx, match)
	if err != nil {
		c.failf("no answer to request %s: %v", id, err)
	}
	c.r.sent[id].answered = true
	c.last.Response = shorten(p.raw)
	if p.err != nil {
		c.expectf("a response that decodes strictly (docs/protocol/messages.md#strict-decoding)", "the response could not be read: %v", p.err)
	}
	return p
}

// query sends a tool.query and returns the catalog payload; a tool.error fails the check.
func (c *cx) query(payload string) map[string]any {
	p := c.exchange(wire.TypeQuery, payload)
	return c.want(p, wire.TypeCatalog)
}

// want fails the check unless p has type typ and an object payload, which it returns.
func (c *cx) want(p *response, typ string) map[string]any {
	if p.typ() != typ {
		c.expectf("a "+typ+" response", "got %s%s", p.typ(), errorSuffix(p))
	}
	o := p.obj()
	if o == nil {
		c.expectf("an object payload", "the payload is %s", describe(p.val))
	}
	return o
}

// wantError fails the check unless p is a tool.error with one of codes; it returns the
// error payload after checking its shape.
func (c *cx) wantError(p *response, codes ...wire.Code) map[string]any {
	names := make([]string, len(codes))
	for i, code := range codes {
		names[i] = string(code)
	}
	if p.typ() != wire.TypeError {
		c.expectf("tool.error "+strings.Join(names, " or "), "got %s", p.typ())
	}
	o := p.obj()
	if o == nil {
		c.expectf("an error object {code, message, retryable, details?}", "the payload is %s", describe(p.val))
	}
	code, _ := o["code"].(string)
	if len(codes) > 0 && !slices.Contains(names, code) {
		c.expectf("tool.error code "+strings.Join(names, " or "), "got code %q: %v", code, o["message"])
	}
	c.problems("an error payload {code, message, retryable, details?} (docs/protocol/calls.md#errors)", errorShape(o, ""))
	return o
}

func errorSuffix(p *response) string {
	if p.typ() != wire.TypeError {
		return ""
	}
	o := p.obj()
	return fmt.Sprintf(" %v: %v", o["code"], o["message"])
}

// errorShape lists what is wrong with an error object.
func errorShape(o map[string]any, at string) []string {
	var list []string
	code, ok := o["code"].(string)
	if !ok || !isSnakeCase(code) {
		list = append(list, fmt.Sprintf("%scode must be a snake_case string, got %s", at, describe(o["code"])))
	}
	if m, present := o["message"]; present && m != nil {
		if _, ok := m.(string); !ok {
			list = append(list, fmt.Sprintf("%smessage must be a string, got %s", at, describe(m)))
		}
	}
	if _, ok := o["retryable"].(bool); !ok {
		list = append(list, fmt.Sprintf("%sretryable must be a boolean, got %s", at, describe(o["retryable"])))
	}
	if d, present := o["details"]; present && d != nil {
		if _, ok := d.(map[string]any); !ok {
			list = append(list, fmt.Sprintf("%sdetails must be an object, got %s", at, describe(d)))
		}
	}
	return list
}

func isSnakeCase(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// probe checks that the app still answers a plain query: after a malformed request the
// app must keep working.
func (c *cx) probe(after string) {
	p := c.exchange(wire.TypeQuery, `{"detail":"index","limit":1}`)
	if p.typ() != wire.TypeCatalog {
		c.expectf("the app keeps working after "+after, "a plain query then got %s%s", p.typ(), errorSuffix(p))
	}
}

// shorten quotes a message for a report.
func shorten(b []byte) string {
	if len(b) <= MaxExchangeBytes {
		return string(b)
	}
	return string(b[:MaxExchangeBytes]) + "… (" + strconv.Itoa(len(b)) + " bytes)"
}

// describe names a decoded JSON value's type (and short values) for messages.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null or nothing"
	case map[string]any:
		return "an object"
	case []any:
		return fmt.Sprintf("an array of %d", len(v))
	case string:
		if len(v) > 80 {
			v = v[:80] + "…"
		}
		return strconv.Quote(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return fmt.Sprintf("%T", v)
}
