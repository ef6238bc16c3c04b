package conformance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ansight-go/ansight/wire"
)

var envelopeChecks = []check{
	{"envelope.correlation", "a response carries id <requestId>.response, replyTo <requestId>, the request's sessionId, capability tool.exec and sentAt in RFC 3339 UTC (docs/protocol/messages.md#correlation)", checkEnvelopeCorrelation},
	{"envelope.no_session_id", "a request without sessionId gets a response without one (or null) (docs/protocol/messages.md#correlation)", checkEnvelopeNoSession},
	{"envelope.request_tolerance", "requests without capability or sentAt, or with sentAt at another offset, are answered (docs/protocol/messages.md#envelope)", checkEnvelopeTolerance},
	{"envelope.foreign_capability", "a message naming another capability is not a tool message and gets no tool response (docs/protocol/messages.md#capability)", checkEnvelopeForeignCapability},
}

// responseTypes maps a request type to the response types that may answer it.
var responseTypes = map[string][]string{
	wire.TypeQuery: {wire.TypeCatalog, wire.TypeError},
	wire.TypeCall:  {wire.TypeResult, wire.TypeError},
	wire.TypeBatch: {wire.TypeBatchResult, wire.TypeError},
}

// envelopeProblems checks a response's envelope against the request s (docs/protocol/messages.md#correlation).
func envelopeProblems(p *response, s *sent) []string {
	if p.env == nil {
		return []string{fmt.Sprintf("the response could not be read: %v", p.err)}
	}
	var list []string
	bad := func(format string, args ...any) { list = append(list, fmt.Sprintf(format, args...)) }
	if !wire.IsResponse(p.env.Type) {
		bad("type %q is not a response type", p.env.Type)
	} else if s != nil && s.typ != "" && !slices.Contains(responseTypes[s.typ], p.env.Type) {
		bad("a %s was answered by %s", s.typ, p.env.Type)
	}
	if s != nil && !s.lenient {
		if p.env.ID != wire.ResponseID(s.id) {
			bad("id is %q, want %q", p.env.ID, wire.ResponseID(s.id))
		}
		if p.env.ReplyTo != s.id {
			bad("replyTo is %q, want %q", p.env.ReplyTo, s.id)
		}
		if p.env.SessionID != s.sessionID {
			bad("sessionId is %q, want %q (the request's, echoed)", p.env.SessionID, s.sessionID)
		}
	}
	if p.env.Capability != wire.CapabilityToolExec {
		bad("capability is %q, want %q", p.env.Capability, wire.CapabilityToolExec)
	}
	if raw, ok := p.top["sentAt"]; ok && string(raw) != "null" {
		var v any
		wire.Unmarshal(raw, &v)
		list = append(list, timestampProblems("sentAt", v)...)
	}
	return list
}

func checkEnvelopeCorrelation(c *cx) {
	sid := c.r.target.SessionID()
	if sid == "" {
		sid = "conformance-session"
	}
	id := c.r.newRequestID()
	raw := fmt.Appendf(nil, `{"type":"tool.query","id":%q,"sessionId":%q,"sentAt":"2026-01-02T03:04:05.678Z","capability":"tool.exec","payload":{"detail":"index","limit":1}}`, id, sid)
	p := c.roundTrip(id, wire.TypeQuery, sid, raw, false)
	c.problems("a correlated response envelope (docs/protocol/messages.md#correlation)", envelopeProblems(p, c.r.sent[id]))
	if p.typ() != wire.TypeCatalog {
		c.expectf("tool.catalog", "got %s%s", p.typ(), errorSuffix(p))
	}
	if _, ok := p.top["sentAt"]; !ok {
		c.notef("responses carry no sentAt (readers treat it as now)")
	}
}

func checkEnvelopeNoSession(c *cx) {
	id := c.r.newRequestID()
	raw := fmt.Appendf(nil, `{"type":"tool.query","id":%q,"capability":"tool.exec","payload":{"detail":"index","limit":1}}`, id)
	p := c.roundTrip(id, wire.TypeQuery, "", raw, false)
	c.problems("no sessionId in the response (docs/protocol/messages.md#correlation: echoed)", envelopeProblems(p, c.r.sent[id]))
	if v, ok := p.top["sessionId"]; ok && string(v) == "null" {
		c.notef("sessionId is written as null (a variant hosts accept, docs/protocol/compatibility.md#tolerated-variants)")
	}
}

func checkEnvelopeTolerance(c *cx) {
	sid := c.r.target.SessionID()
	session := ""
	if sid != "" {
		session = fmt.Sprintf(`,"sessionId":%q`, sid)
	}
	for _, extra := range []string{
		`,"sentAt":"2026-01-02T05:04:05.1+02:00"`,
		`,"sentAt":"2026-01-02T03:04:05.123456789-07:30","capability":"tool.exec"`,
		``,
	} {
		id := c.r.newRequestID()
		raw := fmt.Appendf(nil, `{"type":"tool.query","id":%q%s%s,"payload":{"detail":"index","limit":1}}`, id, session, extra)
		p := c.roundTrip(id, wire.TypeQuery, sid, raw, false)
		if p.typ() != wire.TypeCatalog {
			c.expectf("tool.catalog", "got %s%s", p.typ(), errorSuffix(p))
		}
	}
}

func checkEnvelopeForeignCapability(c *cx) {
	id := c.r.newRequestID()
	raw := fmt.Appendf(nil, `{"type":"tool.query","id":%q,"capability":"conformance.other","payload":{}}`, id)
	c.last = &Exchange{Request: string(raw)}
	if err := c.r.send(c.ctx, id, wire.TypeQuery, "", raw, false); err != nil {
		c.failf("sending failed: %v", err)
	}
	c.r.sent[id].answered = true // no answer is expected; one that comes is a stray
	c.probe("a message of another capability")
	c.probe("a message of another capability")
	for _, p := range c.r.unclaimed {
		if p.replyTo() == id || (p.env != nil && strings.HasPrefix(p.env.ID, id)) {
			c.last.Response = shorten(p.raw)
			c.expectf("no tool response to a message of another capability", "the app answered it as a tool request")
		}
	}
}
