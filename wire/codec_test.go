package wire

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

func TestUnmarshalStrict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		wantErr string // substring; "" means success
	}{
		{"plain", `{"toolId":"a","arguments":{"x":1},"callId":"c"}`, ""},
		{"unknown key allowed", `{"toolId":"a","futureField":{"Nested":true}}`, ""},
		{"whitespace", " \n{ \"toolId\" : \"a\" }\t\r\n", ""},
		{"smuggled case variant", `{"toolId":"a","ToolId":"b"}`, `"toolId" and "ToolId" differ only by case`},
		{"lone case variant", `{"ToolId":"b"}`, `"ToolId" differs from the field name "toolId" only by case`},
		{"upper-case variant", `{"TOOLID":"b"}`, `differs from the field name "toolId"`},
		{"long s variant of field", "{\"toolId\":\"a\",\"after\":{\"delayMilli\u017feconds\":1}}", `differs from the field name "delayMilliseconds"`},
		{"non-ASCII unknown key", "{\"toolId\":\"a\",\"callId\":\"x\",\"\u017fomething\":1}", ""},
		{"long s folds to s", "{\"toolId\":\"a\",\"x\u017f\":1,\"XS\":2}", "differ only by case"},
		{"kelvin folds to k", "{\"toolId\":\"a\",\"\u212a\":1,\"k\":2}", "differ only by case"},
		{"variant in nested struct", `{"toolId":"a","after":{"Include":["visualTree"]}}`, `/after/Include`},
		{"escaped variant", `{"toolId":"a","\u0054oolId":"b"}`, "differ only by case"},
		{"exact duplicate", `{"toolId":"a","toolId":"b"}`, "duplicate"},
		{"escaped duplicate", `{"toolId":"a","tool\u0049d":"b"}`, "duplicate"},
		{"fold duplicate of unknown keys", `{"toolId":"a","extra":1,"EXTRA":2}`, `"extra" and "EXTRA" differ only by case`},
		{"free-form arguments may differ by case", `{"toolId":"a","arguments":{"path":"x","PATH":"y"}}`, ""},
		{"deep free-form values may differ by case", `{"toolId":"a","arguments":{"a":[{"b":{"k":1,"K":2}}]}}`, ""},
		{"exact duplicate in arguments", `{"toolId":"a","arguments":{"a":[{"b":{"k":1,"k":2}}]}}`, "duplicate"},
		{"trailing data", `{"toolId":"a"} {}`, "after the top-level"},
		{"not an object", `[1]`, "cannot decode"},
		{"wrong type", `{"toolId":5}`, "cannot decode JSON number into string"},
		{"invalid UTF-8", "{\"toolId\":\"\xff\"}", "invalid UTF-8"},
		{"truncated", `{"toolId":"a"`, "unexpected EOF"},
		{"empty", ``, "no JSON value"},
		{"only whitespace", " \n", "no JSON value"},
		{"huge integer into int", `{"toolId":"a","after":{"delayMilliseconds":1e999999}}`, "cannot decode"},
		{"depth at limit", `{"toolId":"a","arguments":{"x":` + strings.Repeat("[", MaxDepth-2) + strings.Repeat("]", MaxDepth-2) + `}}`, ""},
		{"depth above limit", `{"toolId":"a","arguments":{"x":` + strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1) + `}}`, "maximum depth"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Call
			err := Unmarshal([]byte(tt.in), &c)
			checkErr(t, err, tt.wantErr)
		})
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("no error, want one containing %q", want)
	}
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("error %T (%v) is not a *DecodeError", err, err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not contain %q", err, want)
	}
}

func TestUnmarshalEmbeddedAndRecursive(t *testing.T) {
	t.Parallel()
	// BatchItem embeds Outcome, whose evidence holds Outcomes: field names of both levels
	// are known, at any depth.
	tests := []struct {
		in      string
		wantErr string
	}{
		{`{"index":1,"success":true,"toolId":"a","evidence":{"visualTree":{"success":true}}}`, ""},
		{`{"index":1,"Success":true}`, `"Success" differs from the field name "success"`},
		{`{"index":1,"evidence":{"v":{"success":true,"Error":null}}}`, `/evidence/v/Error`},
		{`{"index":1,"error":{"code":"x","message":"m","retryable":false,"Details":{}}}`, `"Details" differs from the field name "details"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			var it BatchItem
			checkErr(t, Unmarshal([]byte(tt.in), &it), tt.wantErr)
		})
	}
	var bi BatchItem
	if err := Unmarshal([]byte(tests[0].in), &bi); err != nil || bi.Index != 1 || !bi.Evidence["visualTree"].Success {
		t.Fatalf("decoded %+v, %v", bi, err)
	}
}

func TestUnmarshalLargeObjectFold(t *testing.T) {
	t.Parallel()
	// Past foldSetThreshold names the check switches to a folded set; it must still find
	// variants, also against the early names.
	var b strings.Builder
	b.WriteString(`{`)
	for i := range 100 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strings.Repeat("a", i) + `":1`)
	}
	ok := b.String() + `}`
	bad := b.String() + `,"KAA":2}`
	var c Call
	checkErr(t, Unmarshal([]byte(ok), &c), "")
	checkErr(t, Unmarshal([]byte(bad), &c), `"kaa" and "KAA" differ only by case`)
	// In a map the names are data: tool ids, categories and file names are case-sensitive.
	var m map[string]int
	checkErr(t, Unmarshal([]byte(bad), &m), "")
	if len(m) != 101 {
		t.Fatalf("map has %d entries", len(m))
	}
}

func TestUnmarshalNeedsPointer(t *testing.T) {
	t.Parallel()
	for _, v := range []any{nil, Call{}, (*Call)(nil)} {
		checkErr(t, Unmarshal([]byte(`{}`), v), "non-nil pointer")
	}
}

func TestUnmarshalSizeLimit(t *testing.T) {
	t.Parallel()
	big := make([]byte, DefaultMaxMessageBytes+1)
	var v any
	checkErr(t, Unmarshal(big, &v), "exceeds the limit")
	_, err := DecodeEnvelope(big)
	checkErr(t, err, "exceeds the limit")
}

func TestMarshalDeterministic(t *testing.T) {
	t.Parallel()
	c := Catalog{Schema: CatalogSchema, Revision: "r", Categories: map[string]int{"ui": 2, "files": 1, "app": 3}}
	want := `{"schema":"ansight.tool-catalog.v3","revision":"r","categories":{"app":3,"files":1,"ui":2}}`
	for range 20 {
		b, err := Marshal(&c)
		if err != nil || string(b) != want {
			t.Fatalf("Marshal = %s, %v; want %s", b, err, want)
		}
	}
}

func TestDecodeEnvelopeVariants(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    Envelope
		wantErr string
	}{
		{
			name: "our form",
			in:   `{"type":"tool.call","id":"c1","sessionId":"s","sentAt":"2026-08-25T00:01:00Z","capability":"tool.exec","payload":{"toolId":"a"}}`,
			want: Envelope{Type: TypeCall, ID: "c1", SessionID: "s", SentAt: ts("2026-08-25T00:01:00Z"), Capability: CapabilityToolExec, Payload: jsontext.Value(`{"toolId":"a"}`)},
		},
		{
			name: ".NET form: nulls, +00:00 and seven fraction digits",
			in:   `{"type":"tool.result","id":"c1.response","replyTo":"c1","sessionId":null,"sentAt":"2026-03-20T10:00:00.1234567+00:00","capability":"tool.exec","payload":{"toolId":"a","success":true,"message":null}}`,
			want: Envelope{Type: TypeResult, ID: "c1.response", ReplyTo: "c1", SentAt: ts("2026-03-20T10:00:00.1234567Z"), Capability: CapabilityToolExec, Payload: jsontext.Value(`{"toolId":"a","success":true,"message":null}`)},
		},
		{
			name: "error without request id",
			in:   `{"type":"tool.error","id":"tool.error.0123","replyTo":null,"sessionId":null,"sentAt":"2026-03-20T10:00:00+02:30","capability":null,"payload":{"code":"tool_protocol_invalid_request"}}`,
			want: Envelope{Type: TypeError, ID: "tool.error.0123", SentAt: ts("2026-03-20T07:30:00Z"), Capability: CapabilityToolExec, Payload: jsontext.Value(`{"code":"tool_protocol_invalid_request"}`)},
		},
		{
			name: "no sentAt, no capability, no payload, unknown fields, whitespace",
			in:   " { \"id\" : \"q\" , \"type\" : \"tool.query\" , \"x-trace\" : {\"a\":[1,2]} } ",
			want: Envelope{Type: TypeQuery, ID: "q", Capability: CapabilityToolExec},
		},
		{
			name: "payload with whitespace before it is trimmed",
			in:   "{\"type\":\"t\",\"id\":\"i\",\"payload\" :\n [ 1 , 2 ] }",
			want: Envelope{Type: "t", ID: "i", Capability: CapabilityToolExec, Payload: jsontext.Value("[ 1 , 2 ]")},
		},
		{name: "null sentAt", in: `{"type":"t","id":"i","sentAt":null}`, want: Envelope{Type: "t", ID: "i", Capability: CapabilityToolExec}},
		{name: "negative offset", in: `{"type":"t","id":"i","sentAt":"2026-01-01T00:00:00.5-01:00"}`, want: Envelope{Type: "t", ID: "i", SentAt: ts("2026-01-01T01:00:00.5Z"), Capability: CapabilityToolExec}},
		{name: "lower-case t and z", in: `{"type":"t","id":"i","sentAt":"2026-01-01t00:00:00z"}`, want: Envelope{Type: "t", ID: "i", SentAt: ts("2026-01-01T00:00:00Z"), Capability: CapabilityToolExec}},
		{name: "escaped strings", in: `{"type":"tool.\u0063all","id":"a\"b"}`, want: Envelope{Type: TypeCall, ID: `a"b`, Capability: CapabilityToolExec}},

		{name: "missing type", in: `{"id":"i"}`, wantErr: "no type"},
		{name: "blank id", in: `{"type":"t","id":"  "}`, wantErr: "no id"},
		{name: "null id", in: `{"type":"t","id":null}`, wantErr: "no id"},
		{name: "numeric id", in: `{"type":"t","id":7}`, wantErr: "id must be a string"},
		{name: "case variant key", in: `{"type":"t","id":"i","ReplyTo":"x"}`, wantErr: `"ReplyTo" differs from the field name "replyTo"`},
		{name: "fold duplicate of unknown keys", in: `{"type":"t","id":"i","extra":1,"EXTRA":2}`, wantErr: "differ only by case"},
		{name: "smuggled type", in: `{"type":"tool.query","id":"i","Type":"tool.call"}`, wantErr: "differ only by case"},
		{name: "duplicate id", in: `{"type":"t","id":"i","id":"j"}`, wantErr: "duplicate"},
		{
			name: "payload names are data",
			in:   `{"type":"t","id":"i","payload":{"a":1,"A":2}}`,
			want: Envelope{Type: "t", ID: "i", Capability: CapabilityToolExec, Payload: jsontext.Value(`{"a":1,"A":2}`)},
		},
		{name: "duplicate in payload", in: `{"type":"t","id":"i","payload":{"a":1,"a":2}}`, wantErr: "duplicate"},
		{name: "not an object", in: `["type","id"]`, wantErr: "not a JSON object"},
		{name: "trailing garbage", in: `{"type":"t","id":"i"}x`, wantErr: "invalid character"},
		{name: "second value", in: `{"type":"t","id":"i"} {}`, wantErr: "after the top-level"},
		{name: "bad sentAt", in: `{"type":"t","id":"i","sentAt":"yesterday"}`, wantErr: "RFC 3339"},
		{name: "sentAt without offset", in: `{"type":"t","id":"i","sentAt":"2026-01-01T00:00:00"}`, wantErr: "RFC 3339"},
		{name: "sentAt February 30", in: `{"type":"t","id":"i","sentAt":"2026-02-30T00:00:00Z"}`, wantErr: "RFC 3339"},
		{name: "sentAt number", in: `{"type":"t","id":"i","sentAt":1}`, wantErr: "RFC 3339"},
		{name: "deep payload", in: `{"type":"t","id":"i","payload":` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `}`, wantErr: "maximum depth"},
		{name: "empty", in: ``, wantErr: "no JSON value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := DecodeEnvelope([]byte(tt.in))
			checkErr(t, err, tt.wantErr)
			if err != nil {
				return
			}
			if !e.SentAt.Equal(tt.want.SentAt) || e.SentAt.Location() != tt.want.SentAt.Location() {
				t.Errorf("SentAt = %v, want %v", e.SentAt, tt.want.SentAt)
			}
			e.SentAt, tt.want.SentAt = tt.want.SentAt, e.SentAt
			if e.Type != tt.want.Type || e.ID != tt.want.ID || e.ReplyTo != tt.want.ReplyTo ||
				e.SessionID != tt.want.SessionID || e.Capability != tt.want.Capability ||
				string(e.Payload) != string(tt.want.Payload) {
				t.Errorf("got  %+v\nwant %+v", e, tt.want)
			}
		})
	}
}

func TestAppendEnvelope(t *testing.T) {
	t.Parallel()
	req := &Envelope{Type: TypeCall, ID: "call-1", SessionID: "s1"}
	resp := NewResponse(req, TypeResult, jsontext.Value(`{"toolId":"a","success":true}`), ts("2026-08-25T02:01:00.05+02:00"))
	got, err := AppendEnvelope([]byte("prefix"), resp)
	if err != nil {
		t.Fatal(err)
	}
	want := `prefix{"type":"tool.result","id":"call-1.response","replyTo":"call-1","sessionId":"s1","sentAt":"2026-08-25T00:01:00.05Z","capability":"tool.exec","payload":{"toolId":"a","success":true}}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	back, err := DecodeEnvelope(got[len("prefix"):])
	if err != nil {
		t.Fatal(err)
	}
	if back.ID != resp.ID || back.ReplyTo != resp.ReplyTo || !back.SentAt.Equal(resp.SentAt) || string(back.Payload) != string(resp.Payload) {
		t.Fatalf("round trip: %+v vs %+v", back, resp)
	}

	// Strings that need escaping go through jsontext.
	got, err = AppendEnvelope(nil, &Envelope{Type: "t", ID: "a\"\n<é>"})
	if err != nil || string(got) != `{"type":"t","id":"a\"\n<é>"}` {
		t.Fatalf("escaped: %s, %v", got, err)
	}

	for name, e := range map[string]*Envelope{
		"no type":       {ID: "i"},
		"blank id":      {Type: "t", ID: " "},
		"invalid UTF-8": {Type: "t", ID: "i", SessionID: "\xff"},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := AppendEnvelope([]byte("keep"), e)
			if err == nil || string(out) != "keep" {
				t.Errorf("got %q, %v; want an error and dst unchanged", out, err)
			}
		})
	}

	// AppendResponse writes the same bytes with the id made from replyTo, escaped or not.
	for _, replyTo := range []string{"call-1", "a\"\n<é>"} {
		e := *resp
		e.ReplyTo, e.ID = replyTo, ""
		got, err := AppendResponse([]byte("prefix"), &e)
		e.ID = ResponseID(replyTo)
		want, werr := AppendEnvelope([]byte("prefix"), &e)
		if err != nil || werr != nil || string(got) != string(want) {
			t.Errorf("AppendResponse %s, %v; AppendEnvelope %s, %v", got, err, want, werr)
		}
	}
	for name, e := range map[string]*Envelope{
		"no type":       {ReplyTo: "r"},
		"blank replyTo": {Type: "t", ID: "i", ReplyTo: " "},
		"invalid UTF-8": {Type: "t", ReplyTo: "\xff"},
	} {
		out, err := AppendResponse([]byte("keep"), e)
		if err == nil || string(out) != "keep" {
			t.Errorf("AppendResponse, %s: got %q, %v; want an error and dst unchanged", name, out, err)
		}
	}
}

func TestErrorEnvelopeID(t *testing.T) {
	t.Parallel()
	a, b := ErrorEnvelopeID(), ErrorEnvelopeID()
	if a == b || !strings.HasPrefix(a, "tool.error.") || !isLowerHex(a[len("tool.error."):]) || len(a) != len("tool.error.")+32 {
		t.Fatalf("ErrorEnvelopeID = %q, %q", a, b)
	}
}

func isLowerHex(s string) bool {
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func TestParseTimestamp(t *testing.T) {
	t.Parallel()
	good := map[string]string{
		"2026-08-25T00:00:00Z":                "2026-08-25T00:00:00Z",
		"2026-08-25T00:00:00.050Z":            "2026-08-25T00:00:00.05Z",
		"2026-08-25T00:00:00.123456789123Z":   "2026-08-25T00:00:00.123456789Z",
		"2026-08-25T00:00:00+00:00":           "2026-08-25T00:00:00Z",
		"2026-08-25T00:00:00-23:59":           "2026-08-25T23:59:00Z",
		"2024-02-29T23:59:59.9999999+01:00":   "2024-02-29T22:59:59.9999999Z",
		"0001-01-01T00:00:00Z":                "0001-01-01T00:00:00Z",
		"9999-12-31T23:59:59.999999999-00:00": "9999-12-31T23:59:59.999999999Z",
	}
	for in, want := range good {
		t.Run(in, func(t *testing.T) {
			t.Parallel()
			got, ok := parseTimestamp([]byte(in))
			if !ok || got.Format("2006-01-02T15:04:05.999999999Z07:00") != want || got.Location() != timeUTC {
				t.Errorf("parseTimestamp(%q) = %v, %v; want %s", in, got, ok, want)
			}
		})
	}
	for _, in := range []string{
		"", "2026-08-25", "2026-08-25T00:00:00", "2026-08-25 00:00:00Z", "2026-13-01T00:00:00Z",
		"2026-00-01T00:00:00Z", "2026-01-00T00:00:00Z", "2025-02-29T00:00:00Z", "2026-01-01T24:00:00Z",
		"2026-01-01T00:60:00Z", "2026-01-01T00:00:60Z", "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00+0100",
		"2026-01-01T00:00:00+24:00", "2026-01-01T00:00:00ZZ", "0001-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01", "+026-01-01T00:00:00Z", "2026-01-01T00:00:00.1x",
	} {
		t.Run(fmt.Sprintf("refused %q", in), func(t *testing.T) {
			t.Parallel()
			if got, ok := parseTimestamp([]byte(in)); ok {
				t.Errorf("parseTimestamp(%q) = %v, want failure", in, got)
			}
		})
	}
}

func TestDecodeErrorMessage(t *testing.T) {
	t.Parallel()
	err := (&DecodeError{Path: "/a/b", Offset: 7, Msg: "bad"}).Error()
	if err != "wire: bad at /a/b (offset 7)" {
		t.Fatal(err)
	}
	if err := (&DecodeError{Offset: -1, Msg: "bad"}).Error(); err != "wire: bad" {
		t.Fatal(err)
	}
}

// TestUnmarshalFoldCheckShortcut: the fold check is skipped only while every name is
// exactly a field's and no two fields fold together; otherwise names are compared as
// ever.
func TestUnmarshalFoldCheckShortcut(t *testing.T) {
	t.Parallel()
	var twins struct {
		Lower int `json:"a"`
		Upper int `json:"A"`
	}
	checkErr(t, Unmarshal([]byte(`{"a":1,"A":2}`), &twins), `"a" and "A" differ only by case`)
	var c Call
	checkErr(t, Unmarshal([]byte(`{"toolId":"a","callId":"c","x":1,"CALLID":"d"}`), &c), `"callId" and "CALLID" differ only by case`)
	checkErr(t, Unmarshal([]byte(`{"toolId":"a","callId":"c","arguments":{}}`), &c), "")
}

// TestParseTimestampCalendar holds the envelope's own date arithmetic against the time
// package: every 13th day from year 1 to 9999, the impossible dates and the limits.
func TestParseTimestampCalendar(t *testing.T) {
	t.Parallel()
	for d := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() < 10000; d = d.AddDate(0, 0, 13) {
		s := d.Format("2006-01-02T15:04:05Z")
		got, ok := parseTimestamp([]byte(s))
		if !ok || !got.Equal(d) {
			t.Fatalf("%s: %v %v", s, got, ok)
		}
	}
	for _, s := range []string{"2023-02-29T00:00:00Z", "2024-04-31T00:00:00Z", "0001-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01"} {
		if _, ok := parseTimestamp([]byte(s)); ok {
			t.Fatalf("%s accepted", s)
		}
	}
	for _, s := range []string{"2024-02-29T00:00:00Z", "2000-02-29T23:59:59.999999999+14:00", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"} {
		want, _ := time.Parse(time.RFC3339Nano, s)
		if got, ok := parseTimestamp([]byte(s)); !ok || !got.Equal(want) {
			t.Fatalf("%s: %v %v", s, got, ok)
		}
	}
}

// TestDecodeErrorElidesLongPaths: a refusal shows at most a bounded path, cut on rune
// boundaries, whatever the length of the peer's member names.
func TestDecodeErrorElidesLongPaths(t *testing.T) {
	t.Parallel()
	name := strings.Repeat("é", 100_000)
	err := Unmarshal([]byte(`{"toolId":"a","arguments":{"`+name+`":[1,}}`), new(Call))
	var de *DecodeError
	if !errors.As(err, &de) || len(de.Path) < 200_000 {
		t.Fatalf("%v", err)
	}
	msg := err.Error()
	if len(msg) > 400 || !utf8.ValidString(msg) || !strings.Contains(msg, "…") || !strings.HasSuffix(de.Path, "/1") {
		t.Fatalf("%d-byte message %q", len(msg), msg)
	}
}

// DecodeEnvelopeInto decodes the common forms in the envelope's pass and leaves the rest
// to UnmarshalCall and UnmarshalResultPayload (FuzzDecodeEnvelope holds the two ways
// against each other).
func TestDecodeEnvelopeInto(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in      string
		decoded bool
	}{
		{smallCall, true},
		{`{"type":"tool.result","id":"r","replyTo":"c","payload":{"toolId":"a","success":true,"result":{"screen":"list"}}}`, true},
		{`{"type":"tool.result","id":"r","payload":{"toolId":"a","success":true,"evidence":{}}}`, false},
		{`{"payload":{"toolId":"a","arguments":{}},"type":"tool.call","id":"c"}`, false}, // type after payload
		{`{"type":"tool.call","id":"c","payload":{"toolId":"a","after":{"include":["screenshot"]}}}`, false},
		{`{"type":"tool.call","id":"c","payload":{"$ansightEncoding":"gzip-base64-json","data":""}}`, false},
		{`{"type":"tool.catalog","id":"c","payload":{"toolId":"a"}}`, false},
	} {
		var call Call
		var result Result
		e, decoded, err := DecodeEnvelopeInto([]byte(c.in), &call, &result)
		if err != nil || decoded != c.decoded {
			t.Errorf("%s: decoded %t, %v; want %t", c.in, decoded, err, c.decoded)
			continue
		}
		switch {
		case decoded && e.Type == TypeCall && (call.ToolID != "app.echo" || string(call.Arguments) != `{"text":"hello"}`):
			t.Errorf("%s: %+v", c.in, call)
		case decoded && e.Type == TypeResult && (result.ToolID != "a" || !result.Success || string(result.Result) != `{"screen":"list"}`):
			t.Errorf("%s: %+v", c.in, result)
		}
	}
	// Without a destination for its type, the payload is not decoded.
	if _, decoded, err := DecodeEnvelopeInto([]byte(smallCall), nil, new(Result)); err != nil || decoded {
		t.Errorf("a call with only a result to fill: decoded %t, %v", decoded, err)
	}
}
