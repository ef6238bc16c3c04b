package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/internal/jsonscan"
)

// The SDK encodes a tool's result with encoding/json two levels deep: the connection
// encodes the result (*mcp.CallToolResult's MarshalJSON), which encodes a wire struct
// holding each content's MarshalJSON output and the structured content's, and
// encoding/json scans and compacts what every MarshalJSON returns, at each level. A
// call's answer — its ~450 B framed text, every quote escaped, and its ~220 B structured
// content — is so scanned twice, at about 8 ns a byte on the bench's machine; the
// scanning is most of the answer's encoding, 16–18 µs of CPU a call of the demo's
// app.get_state (BenchmarkResultEncoding). The bridge writes the same bytes in one pass
// instead, for the results it makes (text contents, a compact JSON structured content),
// and leaves the one scan no MarshalJSON avoids, the connection's: 12.5–14.5 µs.
// Anything else goes through the SDK's encoding (docs/performance.md, round 4, seventh
// pass).

// fastResults is receiving middleware that has tool results encoded by fastResult. It is
// the bridge's outermost, so that the bridge's other middleware sees *mcp.CallToolResult;
// the SDK's own handling after it (the result type, the server's _meta) reaches the
// embedded result through fastResult's promoted methods.
func fastResults(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil && err == nil {
			return &fastResult{r}, nil
		}
		return res, err
	}
}

// fastResult is a tool result whose JSON encoding is the SDK's (FuzzFastResult and
// TestFastResultSession hold the bytes equal), written in one pass where it can be.
type fastResult struct{ *mcp.CallToolResult }

var _ mcp.Result = (*fastResult)(nil)

func (r *fastResult) MarshalJSON() ([]byte, error) {
	if b, ok := appendResult(nil, r.CallToolResult); ok {
		return b, nil
	}
	return r.CallToolResult.MarshalJSON()
}

// appendResult appends x's JSON encoding as the SDK writes it (once compacted by
// encoding/json, which the connection does to any MarshalJSON's output), or reports false
// when x holds anything but text contents without annotations and a structured content
// of compact JSON.
//
// The SDK's encoding is CallToolResult's fields in order — _meta (omitted when empty),
// content, structuredContent (omitted when nil), isError (when true), inputRequests and
// requestState (when set: not handled here) — then its unexported result type, which the
// SDK sets after every middleware has returned. The fields appendResult does not write
// it asks the SDK to encode: a copy of x without the others encodes as
// {"content":null<the rest>}, and the rest is appended as it came.
func appendResult(b []byte, x *mcp.CallToolResult) ([]byte, bool) {
	if x.InputRequests != nil || x.RequestState != "" {
		return nil, false
	}
	rest := *x
	rest.Meta, rest.Content, rest.StructuredContent, rest.IsError = nil, nil, nil, false
	tail, err := rest.MarshalJSON()
	const head = `{"content":null`
	if err != nil || !bytes.HasPrefix(tail, []byte(head)) || tail[len(tail)-1] != '}' {
		return nil, false
	}
	tail = tail[len(head) : len(tail)-1]
	if len(tail) > 0 && tail[0] != ',' {
		return nil, false
	}
	var structured jsontext.Value
	switch v := x.StructuredContent.(type) {
	case nil:
	case jsontext.Value:
		if v == nil {
			return nil, false
		}
		structured = v
	default:
		return nil, false
	}
	if b == nil {
		n := 64 + len(tail)
		for _, c := range x.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				n += 48 + len(t.Text) + len(t.Text)/8 // room for a few escapes
			}
		}
		if v, ok := x.StructuredContent.(jsontext.Value); ok {
			n += len(v) + 16
		}
		b = make([]byte, 0, n+len(x.Meta)*96)
	}
	b = append(b, '{')
	if len(x.Meta) > 0 {
		m, err := json.Marshal(map[string]any(x.Meta))
		if err != nil {
			return nil, false
		}
		b = append(append(append(b, `"_meta":`...), m...), ',')
	}
	if x.Content == nil {
		b = append(b, `"content":null`...)
	} else {
		b = append(b, `"content":[`...)
		for i, c := range x.Content {
			t, ok := c.(*mcp.TextContent)
			if !ok || t == nil || t.Annotations != nil {
				return nil, false
			}
			if i > 0 {
				b = append(b, ',')
			}
			// TextContent.MarshalJSON is json.Marshal of {type, text, _meta omitempty,
			// annotations omitempty}: its strings HTML-escaped, as here.
			b = appendHTMLString(append(b, `{"type":"text","text":`...), t.Text)
			switch {
			case len(t.Meta) == 0:
			case len(t.Meta) == 1 && t.Meta[MetaUntrusted] == true: // app text's, on most answers
				b = append(b, `,"_meta":{"`+MetaUntrusted+`":true}`...)
			default:
				m, err := json.Marshal(map[string]any(t.Meta))
				if err != nil {
					return nil, false
				}
				b = append(append(b, `,"_meta":`...), m...)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if structured != nil {
		var ok bool
		if b, ok = appendStructured(append(b, `,"structuredContent":`...), structured); !ok {
			return nil, false
		}
	}
	if x.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(append(b, tail...), '}'), true
}

// appendStructured appends v, a structured content, as the SDK's encoding writes it, or
// reports false when v is not one compact JSON object or array. That encoding is
// encoding/json's compaction of v escaping HTML: of compact JSON, v itself with <, >, &
// and the line and paragraph separators U+2028, U+2029 in its strings written as \u
// escapes.
//
// Compaction also validates v, and fails the whole answer when v is not valid JSON. Here
// encoding/json's compaction of the whole answer (the connection's, of what MarshalJSON
// returns) validates v within it, so v must read the same there: one value on its own,
// not something like {"a":1},"b":{} that would read as members of the answer (its
// brackets close only at its end), and escaped only where a string's characters are,
// never inside an escape sequence, where the escape would turn an invalid "\&" into a
// valid "\\u0026" (the fuzzer's find). Then the answer is valid exactly when v is, as
// the SDK's is.
func appendStructured(b, v []byte) ([]byte, bool) {
	if len(v) == 0 || (v[0] != '{' && v[0] != '[') {
		return nil, false
	}
	const hex = "0123456789abcdef"
	var w jsonscan.StringWalk
	depth, start := 0, 0
	for i, c := range v {
		if c == '<' || c == '>' || c == '&' || c == 0xe2 && i+2 < len(v) && v[i+1] == 0x80 && v[i+2]&^1 == 0xa8 {
			if !w.Character() {
				return nil, false
			}
			b = append(b, v[start:i]...)
			if c == 0xe2 {
				b = append(b, '\\', 'u', '2', '0', '2', hex[v[i+2]&0xf])
				start = i + 3
			} else {
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
				start = i + 1
			}
			continue // a string's character, as the bytes after U+2028's first
		}
		switch {
		case w.Step(c):
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth--; depth == 0 && i != len(v)-1 {
				return nil, false
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return nil, false
		}
	}
	if depth != 0 {
		return nil, false
	}
	return append(b, v[start:]...), true
}

// appendHTMLString appends s as a JSON string the way encoding/json writes it with HTML
// escaping (its appendString): ", \ and control characters escaped (\b, \f, \n, \r, \t
// by name), <, > and & as \u escapes, invalid UTF-8 as \ufffd, U+2028 and U+2029
// escaped; everything else as it is.
func appendHTMLString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}
