package wire

import (
	"errors"
	"reflect"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/internal/jsonscan"
)

// The two payloads on every small call's path, tool.call and tool.result, are decoded by
// hand in the same pass as the strict scan, instead of a scan followed by the json
// package's reflective decoding of the same bytes. Only their common form is taken this
// way: members of the right JSON kinds, no evidence. Anything else — null or
// mistyped members, after, evidence — gives up (errSlowPath) before the destination is
// touched, and the generic path decodes it, with its own errors. FuzzFastDecode holds the
// two paths against each other.

// errSlowPath asks for the generic decoder.
var errSlowPath = errors.New("wire: not the common form")

var (
	callShape   = shapeOf(reflect.TypeFor[Call]())
	resultShape = shapeOf(reflect.TypeFor[Result]())
)

// fastDecode decodes data into v when v is a *Call, a *Result or a *Catalog (see
// fastcatalog.go) in their common form. It
// returns errSlowPath, v untouched, when the generic decoder must do it; any other error
// is the input's (a *DecodeError). The value is built in the pooled scanner, which keeps
// it off the heap until it is copied out.
func fastDecode(data []byte, v any) error {
	switch v := v.(type) {
	case *Call:
		if v != nil {
			return fastInto(data, v, callShape, (*scanner).readCall, func(s *scanner) *Call { return &s.call })
		}
	case *Result:
		if v != nil {
			return fastInto(data, v, resultShape, (*scanner).readResult, func(s *scanner) *Result { return &s.result })
		}
	case *Catalog:
		if v != nil {
			s := getScanner(data)
			defer s.put()
			return s.fastCatalog(v)
		}
	}
	return errSlowPath
}

// fastInto reads data as one object of shape sh into the scanner's slot for T, then
// copies it to dst.
func fastInto[T any](data []byte, dst *T, sh *shape, read func(*scanner, *field) error, slot func(*scanner) *T) error {
	s := getScanner(data)
	defer s.put()
	err := s.fast(sh, read)
	if err == nil {
		*dst = *slot(s)
	}
	return err
}

// fast reads the input as one object of shape sh, handing each field's value to read.
func (s *scanner) fast(sh *shape, read func(s *scanner, f *field) error) error {
	if s.js.Peek() != '{' {
		return errSlowPath
	}
	if err := s.members(sh, read); err != nil {
		if err == errSlowPath {
			return err
		}
		return asDecodeError(err)
	}
	return s.end()
}

// members reads the struct-shaped object at the scanner's position with the strict checks
// (no name equal to a field's or to another's only under case folding); read gets every
// member that is a field and must consume its value, unknown members are checked and
// skipped. Errors carry paths relative to the object (see inPath).
func (s *scanner) members(sh *shape, read func(s *scanner, f *field) error) error {
	if err := s.js.EnterObject(); err != nil {
		return err
	}
	var folded map[string]struct{}
	allExact := true
	for i := 0; ; i++ {
		name, more, err := s.js.Member(i)
		if err != nil || !more {
			return err
		}
		at := s.js.NameOffset()
		f, variant := sh.lookup(name)
		if err := s.checkFoldUnlessExact(sh, f, name, &allExact, &folded, at); err != nil {
			return err
		}
		if variant {
			return decodeError("/"+string(name), int64(at), "object key "+strconv.Quote(string(name))+
				" differs from the field name "+strconv.Quote(string(f.name))+" only by case")
		}
		if f == nil {
			err = s.js.Skip()
		} else {
			err = read(s, f)
		}
		if err != nil {
			return inPath(err, string(name))
		}
	}
}

// str reads a string member; anything else takes the slow path.
func (s *scanner) str(dst *string) error {
	if s.js.Peek() != '"' {
		return errSlowPath
	}
	raw, escaped, err := s.js.String()
	if err == nil {
		*dst = s.intern(unquote(raw, escaped))
	}
	return err
}

// intern returns b as a string, shared with an earlier equal one when the scanner's small
// cache has it: tool ids and call ids repeat from message to message, and a pooled
// scanner mostly serves one goroutine.
func (s *scanner) intern(b []byte) string {
	if len(b) == 0 || len(b) > 64 {
		return string(b)
	}
	h := (uint(len(b))*31 + uint(b[0])*7 + uint(b[len(b)-1])) % uint(len(s.interned))
	if v := s.interned[h]; v == string(b) {
		return v
	}
	v := string(b)
	s.interned[h] = v
	return v
}

// raw copies any value, as the json package does for a jsontext.Value, unless the
// scanner is told to alias the input (see UnmarshalResultPayload).
func (s *scanner) raw(dst *jsontext.Value) error {
	v, err := s.js.Value()
	if err == nil {
		if s.alias {
			*dst = v[:len(v):len(v)] // an append must not write over what follows
		} else {
			*dst = append(jsontext.Value(nil), v...)
		}
	}
	return err
}

func (s *scanner) readCall(f *field) error {
	c := &s.call
	switch string(f.name) {
	case "toolId":
		return s.str(&c.ToolID)
	case "callId":
		return s.str(&c.CallID)
	case "arguments":
		return s.raw(&c.Arguments)
	}
	return errSlowPath // after
}

func (s *scanner) readResult(f *field) error {
	r := &s.result
	switch string(f.name) {
	case "toolId":
		return s.str(&r.ToolID)
	case "message":
		return s.str(&r.Message)
	case "result":
		return s.raw(&r.Result)
	case "success":
		switch s.js.Peek() {
		case 't':
			r.Success = true
		case 'f':
			r.Success = false
		default:
			return errSlowPath
		}
		return s.js.Skip()
	}
	return errSlowPath // evidence
}

// The envelopes of the small call and of its answer are read first in their canonical
// form: the members in the order AppendEnvelope writes them (type, id, replyTo, sessionId,
// sentAt, capability, payload), a tool.call payload as AppendCall writes it (toolId,
// arguments, callId) or a tool.result payload as the app writes it (toolId, success,
// message, result), no whitespace between them, every string member printable ASCII
// without escapes. Each name is then matched as a literal in its place, so the strict
// scan's checks on names (duplicates, case variants, unknown members) hold by
// construction, and the strings need no unescaping; only arguments and result, values of
// any shape, go through the scanner. That is what the host and this SDK write, and it
// costs a third of the general scan. Anything else — another order, a member the form
// does not have, an escape, a space — gives up before it is refused or accepted, and the
// general scan reads the message from the start: it alone accepts or refuses what the
// form does not take, and words the errors. FuzzCanonicalEnvelope holds the two readings
// against each other: where the canonical one takes a message, the value is the same.

// canonicalEnvelope reads s.data, an envelope, in its canonical form into s.env and, fused,
// s.call or s.result, when DecodeEnvelopeInto was asked for that payload. It reports false,
// with the scanner as it was before, when the message is not in that form.
func (s *scanner) canonicalEnvelope() bool {
	if s.canonical() {
		return true
	}
	s.js.Reset(s.data, MaxDepth)
	s.clearDecoded()
	return false
}

func (s *scanner) canonical() bool {
	c := cursor{b: s.data}
	e := &s.env
	if !c.lit(`{"type":"`) {
		return false
	}
	switch typ, _ := c.plain(); {
	case s.fuseCall && string(typ) == TypeCall:
		e.Type = TypeCall
	case s.fuseResult && string(typ) == TypeResult:
		e.Type = TypeResult
	default:
		return false
	}
	if !c.lit(`,"id":`) || !s.canonicalString(&c, &e.ID, fieldID, false) ||
		c.lit(`,"replyTo":`) && !s.canonicalString(&c, &e.ReplyTo, fieldReplyTo, true) ||
		c.lit(`,"sessionId":`) && !s.canonicalString(&c, &e.SessionID, fieldSessionID, true) {
		return false
	}
	if c.lit(`,"sentAt":`) && !c.lit("null") {
		if !c.lit(`"`) {
			return false
		}
		b, _ := c.plain() // nil when not plain, which parseTimestamp refuses
		var ok bool
		if e.SentAt, ok = parseTimestamp(b); !ok {
			return false
		}
	}
	if c.lit(`,"capability":`) && !s.canonicalString(&c, &e.Capability, fieldCapability, true) || !c.lit(`,"payload":`) {
		return false
	}
	start := c.i
	if e.Type == TypeCall && !s.canonicalCall(&c) || e.Type == TypeResult && !s.canonicalResult(&c) {
		return false
	}
	e.Payload = s.data[start:c.i]
	if !c.lit("}") || c.i != len(c.b) {
		return false
	}
	s.fused = true
	return true
}

// canonicalCall reads a tool.call payload in its canonical form into s.call.
func (s *scanner) canonicalCall(c *cursor) bool {
	if !c.lit(`{"toolId":"`) {
		return false
	}
	b, ok := c.plain()
	s.call.ToolID = s.intern(b)
	if ok && c.lit(`,"arguments":`) {
		ok = s.canonicalValue(c, &s.call.Arguments)
	}
	if ok && c.lit(`,"callId":"`) {
		b, ok = c.plain()
		s.call.CallID = s.intern(b)
	}
	return ok && c.lit("}")
}

// canonicalResult reads a tool.result payload in its canonical form into s.result, its
// result a piece of the input (as in UnmarshalResultPayload).
func (s *scanner) canonicalResult(c *cursor) bool {
	r := &s.result
	if !c.lit(`{"toolId":"`) {
		return false
	}
	b, ok := c.plain()
	r.ToolID = s.intern(b)
	switch {
	case !ok || !c.lit(`,"success":`):
		return false
	case c.lit("true"):
		r.Success = true
	case !c.lit("false"):
		return false
	}
	if c.lit(`,"message":"`) {
		if b, ok = c.plain(); !ok {
			return false
		}
		r.Message = s.intern(b)
	}
	if c.lit(`,"result":`) {
		s.alias = true
		ok = s.canonicalValue(c, &r.Result)
		s.alias = false
	}
	return ok && c.lit("}")
}

// canonicalString reads an envelope's string member (or, when nullable, null) as
// envelopeString keeps it.
func (s *scanner) canonicalString(c *cursor, dst *string, field envelopeField, nullable bool) bool {
	if nullable && c.lit("null") {
		return true
	}
	if !c.lit(`"`) {
		return false
	}
	b, ok := c.plain()
	if ok {
		s.keepString(dst, field, b)
	}
	return ok
}

// canonicalValue reads the value at c, a payload's member, with the scanner's strict
// checks (its depth counted from the payload's, two below the envelope's), as raw keeps
// it. It gives up on whitespace before the value, which the form does not have.
func (s *scanner) canonicalValue(c *cursor, dst *jsontext.Value) bool {
	s.js.Reset(c.b[c.i:], MaxDepth-2)
	if s.raw(dst) != nil || len(*dst) != s.js.Pos() {
		return false
	}
	c.i += s.js.Pos()
	return true
}

// cursor is canonicalEnvelope's place in its input.
type cursor struct {
	b []byte
	i int
}

// lit consumes lit if the input continues with it.
func (c *cursor) lit(lit string) bool {
	if len(c.b)-c.i >= len(lit) && string(c.b[c.i:c.i+len(lit)]) == lit {
		c.i += len(lit)
		return true
	}
	return false
}

// plain reads the rest of a string whose opening quote was consumed, and its closing
// quote, when it holds printable ASCII only, no escape: its value is then its bytes.
func (c *cursor) plain() ([]byte, bool) {
	if i := jsonscan.SkipPlain(c.b, c.i); i < len(c.b) && c.b[i] == '"' {
		b := c.b[c.i:i]
		c.i = i + 1
		return b, true
	}
	return nil, false
}
