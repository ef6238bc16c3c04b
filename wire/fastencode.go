package wire

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// AppendCall appends to dst the JSON of a tool.call payload, as Marshal writes it; the
// common form (no after block, arguments absent or compact) without reflection and, when
// dst has room, without allocating.
func AppendCall(dst []byte, c *Call) ([]byte, error) {
	if b, ok := appendCall(dst, c); ok {
		return b, nil
	}
	v := *c // the json package keeps what it is given: a copy, so that c stays the caller's
	b, err := json.Marshal(&v, marshalOptions)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// appendCall appends the JSON of a tool.call payload without reflection, for the common
// form (no after block, arguments absent or already compact); ok is false, with dst as it
// was, when the json package must write it: it alone words the errors. The output is
// byte for byte the json package's (FuzzFastEncode checks it).
func appendCall(dst []byte, c *Call) (out []byte, ok bool) {
	if c.After != nil || c.Arguments != nil && !compactJSON(c.Arguments) {
		return dst, false
	}
	if dst == nil {
		dst = make([]byte, 0, len(`{"toolId":"","arguments":,"callId":""}`)+len(c.ToolID)+len(c.Arguments)+len(c.CallID)+8)
	}
	b, err := jsontext.AppendQuote(append(dst, `{"toolId":`...), c.ToolID)
	if err != nil {
		return dst, false
	}
	if c.Arguments != nil {
		b = append(append(b, `,"arguments":`...), c.Arguments...)
	}
	if c.CallID != "" {
		if b, err = jsontext.AppendQuote(append(b, `,"callId":`...), c.CallID); err != nil {
			return dst, false
		}
	}
	return append(b, '}'), true
}

// compactJSON reports whether v is one valid JSON value written as the json package would
// write it: no whitespace at all (a string holding a space is refused too, which only
// costs the slow path) and no escape sequences, which the package may rewrite.
func compactJSON(v []byte) bool {
	for _, c := range v {
		if c <= ' ' || c == '\\' {
			return false
		}
	}
	s := getScanner(v) // pooled: a scanner of its own would allocate its name stacks
	defer s.put()
	return s.js.Skip() == nil && s.js.End() == nil
}
