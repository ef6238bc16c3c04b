package wire

import (
	"bytes"
	stdjson "encoding/json" // only to show that strictly accepted input reads the same in v1
	"errors"
	"flag"
	"fmt"
	"github.com/go-json-experiment/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite the seed corpora under testdata/fuzz")

// examples returns the protocol examples of the original contract (testdata/examples).
func examples(t testing.TB) map[string][]byte {
	paths, err := filepath.Glob("testdata/examples/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(p), ".json")] = b
	}
	return out
}

func TestContractExamples(t *testing.T) {
	t.Parallel()
	targets := map[string]any{"query": new(Query), "catalog": new(Catalog), "call": new(Call), "batch": new(Batch)}
	for name, msg := range examples(t) {
		t.Run(name, func(t *testing.T) {
			e, err := DecodeEnvelope(msg)
			if err != nil {
				t.Fatal(err)
			}
			if e.SessionID != "session_1" || e.Capability != CapabilityToolExec || e.SentAt.IsZero() {
				t.Errorf("envelope %+v", e)
			}
			body, err := DecodePayload(e.Payload, 0)
			if name == "catalog-compressed" { // its data is an elided placeholder
				checkErr(t, err, "not valid base64")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := Unmarshal(body, targets[name]); err != nil {
				t.Fatalf("payload: %v", err)
			}
			if b, ok := targets[name].(*Batch); ok {
				for i, raw := range b.Calls {
					var c Call
					if err := Unmarshal(raw, &c); err != nil || c.ToolID == "" {
						t.Fatalf("batch call %d: %v", i, err)
					}
				}
			}
		})
	}
}

// hostileJSON are inputs every JSON fuzz target is seeded with.
func hostileJSON() []string {
	return []string{
		`{"type":"tool.call","id":"a","type":"tool.query"}`,
		`{"type":"tool.call","id":"a","Type":"tool.query"}`,
		`{"type":"tool.call","id":"a","payload":{"toolId":"x","ToolId":"y"}}`,
		`{"type":"tool.call","id":"a","payload":{"ToolId":"y"}}`,
		"{\"type\":\"tool.call\",\"id\":\"a\",\"payload\":{\"a\u017f\":1,\"AS\":2}}",
		`{"type":"tool.call","id":"a","payload":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`,
		`{"type":"tool.call","id":"a","payload":` + strings.Repeat(`{"a":`, 255) + "1" + strings.Repeat("}", 255) + `}`,
		`{"type":"tool.call","id":"a","payload":{"toolId":"x","after":{"delayMilliseconds":1e999999999}}}`,
		`{"type":"tool.call","id":"a","payload":{"n":-123456789012345678901234567890.5e-400}}`,
		`{"type":"tool.call","id":"a","sentAt":"0000-01-01T00:00:00-23:59"}`,
		`{"type":"tool.call","id":"a","sentAt":"2026-08-25T00:00:00.1234567890123456789+00:00"}`,
		`{"type":"tool.call","id":"\ud800"}`,
		"{\"type\":\"tool.call\",\"id\":\"\xff\"}",
		`{"type":"tool.call","id":" "}`,
		`{"type":"","id":"a"}`,
		`{"type":"t","id":"a"}{"type":"t","id":"a"}`,
		`[]`, `null`, ``, `{`,
	}
}

// wrapped returns a gzip-base64-json payload around a real, compressible JSON body.
func wrapped(t testing.TB) []byte {
	enc, err := EncodePayload(bigCatalog(CompressionThreshold))
	if err != nil || !bytes.HasPrefix(enc, []byte(`{"$ansightEncoding"`)) {
		t.Fatalf("EncodePayload: %v", err)
	}
	return enc
}

func FuzzDecodeEnvelope(f *testing.F) {
	for _, s := range []string{
		smallCall,
		`{"type":"tool.result","id":"r","replyTo":"c","payload":{"toolId":"a","success":true,"result":{"screen":"list","n":1}}}`,
		`{"type":"tool.result","id":"r","payload":{"toolId":"a","success":true,"evidence":{}}}`,
		`{"type":"tool.result","id":"r","payload":{"$ansightEncoding":"gzip-base64-json","data":"H4sIAAAAAAAA/6pWKkktLlGyUlAqS8wpTVWqBQQAAP//AQAA//8="}}`,
		`{"payload":{"toolId":"a","arguments":{}},"type":"tool.call","id":"c"}`,
		`{"type":"tool.call","id":"c","payload":{"toolId":"a","ToolId":"b"}}`,
		`{"type":"tool.call","id":"c","payload":{"toolId":"a","after":{"include":["screenshot"]}}}`,
		`{"type":"tool.call","id":" ","payload":{"toolId":"a"}}`,
		`{"type":"tool.result","id":"r","payload":{"toolId":"a","result":{"x":1,"x":2}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := DecodeEnvelope(data)
		// DecodeEnvelopeInto answers as DecodeEnvelope does, and a payload it decodes on
		// the way is what UnmarshalCall or UnmarshalResultPayload make of it.
		var call Call
		var result Result
		fe, decoded, ferr := DecodeEnvelopeInto(data, &call, &result)
		if (err == nil) != (ferr == nil) || err != nil && err.Error() != ferr.Error() || !reflect.DeepEqual(e, fe) {
			t.Fatalf("%q: DecodeEnvelopeInto %+v, %v; DecodeEnvelope %+v, %v", data, fe, ferr, e, err)
		}
		// DecodeResponseInto answers as DecodeEnvelopeInto(data, nil, …) does, its id and
		// sessionId checked but not kept, its replyTo as bytes.
		var lresult, rresult Result
		le, ldecoded, lerr := DecodeEnvelopeInto(data, nil, &lresult)
		re, replyTo, rdecoded, rerr := DecodeResponseInto(data, &rresult)
		if (lerr == nil) != (rerr == nil) || lerr != nil && lerr.Error() != rerr.Error() || ldecoded != rdecoded ||
			!reflect.DeepEqual(lresult, rresult) || string(replyTo) != le.ReplyTo {
			t.Fatalf("%q: DecodeResponseInto %+v %q %v, %v; DecodeEnvelopeInto %+v %v, %v", data, re, replyTo, rdecoded, rerr, le, ldecoded, lerr)
		}
		le.ID, le.SessionID, le.ReplyTo = "", "", ""
		if lerr == nil && !reflect.DeepEqual(re, le) {
			t.Fatalf("%q: DecodeResponseInto %+v; DecodeEnvelopeInto %+v", data, re, le)
		}
		switch {
		case !decoded:
			if !reflect.DeepEqual(call, Call{}) || !reflect.DeepEqual(result, Result{}) {
				t.Fatalf("%q: not decoded, but %+v, %+v", data, call, result)
			}
		case e.Type == TypeCall:
			want, err := UnmarshalCall(e.Payload)
			if err != nil || !reflect.DeepEqual(call, want) || !reflect.DeepEqual(result, Result{}) {
				t.Fatalf("%q: decoded %+v; UnmarshalCall %+v, %v", data, call, want, err)
			}
		case e.Type == TypeResult:
			var want Result
			if _, err := UnmarshalResultPayload(e.Payload, 0, &want); err != nil || !reflect.DeepEqual(result, want) || !reflect.DeepEqual(call, Call{}) {
				t.Fatalf("%q: decoded %+v; UnmarshalResultPayload %+v, %v", data, result, want, err)
			}
		default:
			t.Fatalf("%q: decoded a %s payload", data, e.Type)
		}
		if err != nil {
			var de *DecodeError
			if !reflect.DeepEqual(e, Envelope{}) || !errors.As(err, &de) {
				t.Fatalf("DecodeEnvelope: %v, %T", e, err)
			}
			return
		}
		// Whatever the envelope reader accepts, the general strict reader accepts too.
		var v jsontext.Value
		if err := Unmarshal(data, &v); err != nil {
			t.Fatalf("DecodeEnvelope accepted what Unmarshal refuses: %v", err)
		}
		// Written back and read again, the envelope is the same.
		out, err := AppendEnvelope(nil, &e)
		if err != nil {
			t.Fatalf("AppendEnvelope of a decoded envelope: %v", err)
		}
		e2, err := DecodeEnvelope(out)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", out, err)
		}
		// A response written by AppendResponse is the envelope with its id made by
		// ResponseID, written by AppendEnvelope.
		if strings.TrimSpace(e.ReplyTo) != "" {
			resp, err := AppendResponse([]byte("x"), &e)
			r := e
			r.ID = ResponseID(e.ReplyTo)
			want, werr := AppendEnvelope([]byte("x"), &r)
			if (err == nil) != (werr == nil) || !bytes.Equal(resp, want) {
				t.Fatalf("AppendResponse %s, %v; AppendEnvelope %s, %v", resp, err, want, werr)
			}
		}
		if !e.SentAt.Equal(e2.SentAt) || e.Type != e2.Type || e.ID != e2.ID || e.ReplyTo != e2.ReplyTo ||
			e.SessionID != e2.SessionID || e.Capability != e2.Capability || !bytes.Equal(e.Payload, e2.Payload) {
			t.Fatalf("round trip changed the envelope:\n%+v\n%+v", e, e2)
		}
	})
}

func FuzzDecodePayload(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 1 << 20
		// UnmarshalPayload agrees with DecodePayload followed by Unmarshal.
		var one, two Result
		_, err1 := UnmarshalPayload(data, limit, &one)
		out, err := DecodePayload(data, limit)
		err2 := err
		if err2 == nil {
			err2 = Unmarshal(out, &two)
		}
		if (err1 == nil) != (err2 == nil) || err1 == nil && !reflect.DeepEqual(one, two) {
			t.Fatalf("UnmarshalPayload: %+v, %v; DecodePayload and Unmarshal: %+v, %v", one, err1, two, err2)
		}
		if err != nil {
			return
		}
		if len(out) > limit {
			t.Fatalf("DecodePayload returned %d bytes over the limit", len(out))
		}
		if !bytes.Equal(out, data) { // unwrapped: must be strict JSON
			if err := scanStrict(out, nil); err != nil {
				t.Fatalf("DecodePayload returned invalid JSON: %v", err)
			}
		}
		// Any strict JSON value, padded past the threshold, survives EncodePayload.
		if scanStrict(data, nil) != nil {
			return
		}
		body := append(append([]byte(`[`), data...), `,"`+strings.Repeat("a", CompressionThreshold)+`"]`...)
		enc, err := EncodePayload(body)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodePayload(enc, int64(len(body)))
		if err != nil || !bytes.Equal(back, body) {
			t.Fatalf("EncodePayload round trip: %v", err)
		}
	})
}

func FuzzParseFrame(f *testing.F) {
	f.Fuzz(func(t *testing.T, msg []byte) {
		if fr, err := ParseFrame(msg); err == nil {
			if len(fr.Payload) <= MaxChunkSize {
				out, err := AppendFrame(nil, fr)
				if err != nil || !bytes.Equal(out, msg) {
					t.Fatalf("ASFT round trip: %v\n%q\n%q", err, out, msg)
				}
			}
		} else if IsASFT(msg) && len(msg) >= FrameHeaderSize && msg[4] == 1 && msg[5] >= 1 && msg[5] <= 3 &&
			msg[6] == 0 && msg[7] == 0 && isTransferID(msg[8:40]) && int32(le32(msg[40:])) >= 0 &&
			int64(le64(msg[44:])) >= 0 && int64(int32(le32(msg[52:]))) == int64(len(msg)-56) && (msg[5] != 2 || len(msg) == 56) {
			t.Fatalf("ParseFrame refused a valid frame: %v", err)
		}
		if fr, err := ParseASJP(msg); err == nil {
			out, err := AppendASJP(nil, fr)
			if err != nil || !bytes.Equal(out, msg) {
				t.Fatalf("ASJP round trip: %v", err)
			}
		}
	})
}

// FuzzUnmarshalCall checks the point of the strict decoder: whatever it accepts, Go's
// case-folding encoding/json v1 reads to the same values, so no second reading of the same
// bytes can see a different call.
func FuzzUnmarshalCall(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Call
		if err := Unmarshal(data, &c); err != nil {
			return
		}
		var v1 struct {
			ToolID    string             `json:"toolId"`
			Arguments stdjson.RawMessage `json:"arguments"`
			CallID    string             `json:"callId"`
			After     *struct {
				Include             []string           `json:"include"`
				DelayMilliseconds   int                `json:"delayMilliseconds"`
				VisualTreeArguments stdjson.RawMessage `json:"visualTreeArguments"`
				ScreenshotArguments stdjson.RawMessage `json:"screenshotArguments"`
			} `json:"after"`
		}
		if err := stdjson.Unmarshal(data, &v1); err != nil {
			return // v1 is laxer in some ways and stricter in none that matter here
		}
		if v1.ToolID != c.ToolID || v1.CallID != c.CallID || !sameJSON(v1.Arguments, c.Arguments) {
			t.Fatalf("v1 read %q/%q/%s, strict read %q/%q/%s", v1.ToolID, v1.CallID, v1.Arguments, c.ToolID, c.CallID, c.Arguments)
		}
		if (v1.After == nil) != (c.After == nil) {
			t.Fatalf("v1 after %v, strict after %v", v1.After, c.After)
		}
		if c.After != nil && (v1.After.DelayMilliseconds != c.After.DelayMilliseconds ||
			!reflect.DeepEqual(nilIfEmpty(v1.After.Include), nilIfEmpty(c.After.Include))) {
			t.Fatalf("v1 after %+v, strict after %+v", v1.After, c.After)
		}
	})
}

func sameJSON(a, b []byte) bool {
	if string(a) == "null" {
		a = nil
	}
	if string(b) == "null" {
		b = nil
	}
	return bytes.Equal(a, b)
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
func le64(b []byte) uint64 { return uint64(le32(b)) | uint64(le32(b[4:]))<<32 }

// TestWriteSeedCorpora rewrites testdata/fuzz/* when run with -update-corpus. The seeds
// are committed, so plain `go test` replays them as regression tests.
func TestWriteSeedCorpora(t *testing.T) {
	t.Parallel()
	if !*updateCorpus {
		t.Skip("run with -update-corpus to rewrite the seed corpora")
	}
	var jsonSeeds [][]byte
	for _, name := range []string{"query", "catalog", "call", "batch", "catalog-compressed"} {
		jsonSeeds = append(jsonSeeds, examples(t)[name])
	}
	for _, h := range hostileJSON() {
		jsonSeeds = append(jsonSeeds, []byte(h))
	}
	resp, _ := AppendEnvelope(nil, NewResponse(&Envelope{Type: TypeCall, ID: "c"}, TypeResult, wrapped(t), time.Unix(0, 1)))
	jsonSeeds = append(jsonSeeds, resp)
	writeCorpus(t, "FuzzDecodeEnvelope", jsonSeeds)

	callSeeds := [][]byte{
		[]byte(`{"toolId":"ui.perform_action","arguments":{"action":"tap"},"callId":"c","after":{"include":["visualTree"],"delayMilliseconds":100}}`),
		[]byte(`{"toolId":"a","ToolId":"b"}`), []byte(`{"ToolId":"b"}`), []byte(`{"toolId":"a","toolid":"b"}`),
		[]byte(`{"toolId":"a","arguments":null,"after":null}`), []byte(`{"toolId":"a","after":{"include":null}}`),
		[]byte("{\"toolId\":\"a\",\"after\":{\"delayMilli\u017feconds\":5}}"),
	}
	writeCorpus(t, "FuzzUnmarshalCall", callSeeds)

	bomb := wrap(1000, gzipBomb(t, 16<<20)) // small enough to commit, still over the limit
	gz := gzipBytes(t, []byte(`{"a":1}`))
	payloadSeeds := [][]byte{
		wrapped(t), bomb, wrap(7, gz), wrap(1<<40, gz),
		[]byte(`{"$ansightEncoding":"br","data":""}`), []byte(`{"$ansightEncoding":"gzip-base64-json","data":"@@"}`),
		[]byte(`{"$AnsightEncoding":"gzip-base64-json","data":""}`), []byte(`{"\u0024ansightEncoding":"gzip-base64-json","data":""}`),
		[]byte(`{"toolId":"a","success":true}`), []byte(`[1,2,3]`), []byte(`"x"`),
	}
	writeCorpus(t, "FuzzDecodePayload", payloadSeeds)

	id := "0123456789abcdef0123456789abcdef"
	chunk, _ := AppendFrame(nil, Frame{Type: FrameChunk, TransferID: id, Payload: []byte("hello")})
	done, _ := AppendFrame(nil, Frame{Type: FrameComplete, TransferID: id, Sequence: 1, Offset: 5})
	fail, _ := AppendFrame(nil, Frame{Type: FrameError, TransferID: id, Sequence: 1, Offset: 5, Payload: []byte("boom")})
	live, _ := AppendASJP(nil, ASJPFrame{Format: 1, Quality: 70, Flags: 1, CapturedAt: time.UnixMilli(1), Width: 2, Height: 3, JPEG: []byte{0xff, 0xd8}})
	bad := bytes.Clone(chunk)
	bad[52] = 0xff
	frameSeeds := [][]byte{chunk, done, fail, live, bad, chunk[:55], []byte("ASFT"), []byte("ASJP"), {}}
	writeCorpus(t, "FuzzParseFrame", frameSeeds)
}

func writeCorpus(t *testing.T, target string, seeds [][]byte) {
	dir := filepath.Join("testdata", "fuzz", target)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, s := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzFastDecode holds the hand decoders of tool.call, tool.result and tool.catalog
// payloads (a catalog's tools entries in their canonical form, canonicalEntry, or not,
// their schemas read by QuickValue or not) against the generic strict path (shape scan,
// then the json package): where the fast path takes an input, both accept it or both
// refuse it, and accepted values are equal.
func FuzzFastDecode(f *testing.F) {
	for _, s := range []string{
		`{"toolId":"app.echo","arguments":{"text":"hello"},"callId":"c1"}`,
		`{"toolId":"a\u00e9","arguments":null,"x":[1,{"y":2}]}`,
		`{"toolId":"a","toolid":"b"}`,
		`{"toolId":"a","arguments":{"a":1,"a":2}}`,
		`{"toolId":"app.get_state","success":true,"message":"ok","result":{"screen":"list"}}`,
		`{"toolId":"t","success":false,"result":[1,2,3]} `,
		`{"toolId":"t","success":true,"evidence":{}}`,
		`{"toolId":"t","Success":true}`,
		`{"toolId":"t"}x`,
		`{"schema":"ansight.tool-catalog.v3","revision":"sha256:1","tools":[{"id":"a.b","name":"A \u00e9","description":"d","category":"c","policy":"read","argumentsSchema":{"type":"object"},"resultSchema":{},"keywords":"k","prerequisiteToolIds":["x","y\n"],"definitionRevision":"sha256:2","runtime":{"available":false,"code":"c","retryable":true},"executable":false}],"count":1,"detail":"index","availabilityRevision":"sha256:3","evaluatedAtUtc":"2026-12-01T15:03:04.5+00:00","totalCount":2,"categories":{"c":1,"C":1}}`,
		`{"schema":"s","revision":"r","tools":[],"count":0,"detail":"definitions"}`,
		`{"schema":"s","revision":"r","unchanged":true,"availabilityRevision":"a","evaluatedAtUtc":"2026-12-01T15:03:04Z","changes":{"t":{"available":false}}}`,
		`{"schema":"s","tools":[{"id":"a","policy":"DELETE","prerequisiteToolIds":[]},{"id":"b","Policy":"read"}]}`,
		`{"tools":[{"id":"a","policy":"nope"}]}`,
		`{"tools":[{"id":null}],"count":1.0}`,
		`{"tools":null,"totalCount":-1,"denial":{"code":"x"}}`,
		`{"tools":[{"denial":{"code":"x","reason":"y"},"executable":true,"argumentEncoding":"flattened-string"}],"count":99999999999999999999}`,
		`{"tools":[{"runtime":{"available":false,"Code":"x"}}]}`,
		`{"evaluatedAtUtc":"yesterday"}`,
	} {
		f.Add([]byte(s))
	}
	for _, s := range canonicalEntrySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkFastDecode)
}

// checkFastDecode is FuzzFastDecode's check of one input.
func checkFastDecode(t *testing.T, data []byte) {
	generic := func(v any) error {
		sh, err := shapeFor(v)
		if err == nil {
			err = scanStrict(data, sh)
		}
		if err == nil {
			err = decodeChecked(data, v)
		}
		return err
	}
	for _, pair := range [][2]any{{new(Call), new(Call)}, {new(Result), new(Result)}, {new(Catalog), new(Catalog)}} {
		err := fastDecode(data, pair[0])
		if err == errSlowPath {
			if !reflect.DeepEqual(pair[0], reflect.New(reflect.TypeOf(pair[0]).Elem()).Interface()) {
				t.Fatalf("%q: the fast path gave up but changed the value: %+v", data, pair[0])
			}
			continue
		}
		gerr := generic(pair[1])
		if (err == nil) != (gerr == nil) {
			t.Fatalf("%q into %T: fast %v, generic %v", data, pair[0], err, gerr)
		}
		if err == nil && !reflect.DeepEqual(pair[0], pair[1]) {
			t.Fatalf("%q: fast %+v, generic %+v", data, pair[0], pair[1])
		}
	}
	// UnmarshalResultPayload is UnmarshalPayload into a Result, whichever path it
	// takes; its result is a piece of the payload that an append cannot overwrite.
	var wantR, gotR Result
	wp, werr := UnmarshalPayload(data, 0, &wantR)
	gp, gerr := UnmarshalResultPayload(data, 0, &gotR)
	if (gerr == nil) != (werr == nil) || gerr == nil && (!bytes.Equal(gp, wp) || !reflect.DeepEqual(gotR, wantR)) {
		t.Fatalf("%q: UnmarshalResultPayload %+v, %v; UnmarshalPayload %+v, %v", data, gotR, gerr, wantR, werr)
	}
	if gerr == nil && len(gotR.Result) > 0 {
		before := string(gp)
		_ = append(gotR.Result, "xx"...)
		if string(gp) != before {
			t.Fatalf("%q: appending to the result changed the payload", data)
		}
	}
	// UnmarshalCall is Unmarshal into a Call, whichever path it takes.
	var want Call
	werr = Unmarshal(data, &want)
	got, err := UnmarshalCall(data)
	if (err == nil) != (werr == nil) || err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: UnmarshalCall %+v, %v; Unmarshal %+v, %v", data, got, err, want, werr)
	}
}

// FuzzFastEncode holds appendCall against the json package: where it writes a call, it
// writes the same bytes.
func FuzzFastEncode(f *testing.F) {
	f.Add("app.echo", []byte(`{"text":"hello"}`), "c1")
	f.Add("a\u00e9<>&", []byte(`[1,2.50,{"a":null}]`), "")
	f.Add("t", []byte(nil), "")
	f.Add("t", []byte(`{"a":1,"a":2}`), "x")
	f.Add("\xff", []byte(`1`), "")
	f.Fuzz(func(t *testing.T, id string, args []byte, callID string) {
		c := Call{ToolID: id, Arguments: args, CallID: callID}
		fast, ok := appendCall(nil, &c)
		if !ok {
			return
		}
		want, err := json.Marshal(c, marshalOptions)
		if err != nil || string(fast) != string(want) {
			t.Fatalf("%+v: fast %s; json %s, %v", c, fast, want, err)
		}
	})
}

// canonicalEntrySeeds are catalogs whose tools entries are in canonical form
// (canonicalEntry) or just not: another order, a repeated or unknown member, a case
// variant, an escaped name, a space, a schema with a duplicate or case-variant name, a
// large or deep schema, members canonicalEntry hands to the json package.
var canonicalEntrySeeds = func() []string {
	entry := `{"id":"bench.synthetic_00001","name":"Synthetic 1","description":"Synthetic tool 1 of 2: echoes its value.","category":"bench","policy":"read",` +
		`"argumentsSchema":{"type":"object","properties":{"value":{"type":"string","maxLength":100,"description":"Echoed back."}}},` +
		`"resultSchema":{"type":"object","properties":{"tool":{"type":"string"},"value":{"type":"string"}},"required":["tool","value"]},` +
		`"keywords":"synthetic benchmark","definitionRevision":"sha256:0123"}`
	cat := func(entries ...string) string {
		return `{"schema":"ansight.tool-catalog.v3","revision":"sha256:1","tools":[` + strings.Join(entries, ",") + `],"count":2,"detail":"definitions"}`
	}
	seeds := []string{cat(entry, entry), cat(`{}`, entry), cat(entry, `{ }`), cat(`{"id":"a"}`)}
	for _, edit := range [][2]string{
		{`"name":"Synthetic 1",`, ``},
		{`"name":"Synthetic 1",`, `"name":"Synthetic 1","name":"x",`},
		{`"name":"Synthetic 1",`, `"Name":"Synthetic 1",`},
		{`"name":"Synthetic 1",`, `"NAME":"x","name":"Synthetic 1",`},
		{`"id":"bench.synthetic_00001","name":"Synthetic 1",`, `"name":"Synthetic 1","id":"bench.synthetic_00001",`},
		{`"name":`, `"n\u0061me":`},
		{`"name":`, `"nâme":`},
		{`"name":`, `"name" :`},
		{`"name":`, ` "name":`},
		{`,"name":`, ` ,"name":`},
		{`"keywords":`, `"extra":[1,{"a":2}],"keywords":`},
		{`"keywords":`, `"prerequisiteToolIds":["a","b"],"keywords":`},
		{`"definitionRevision":"sha256:0123"`, `"definitionRevision":"sha256:0123","runtime":{"available":false,"code":"c"},"executable":false,"denial":{"code":"x"}}`},
		{`"definitionRevision":"sha256:0123"`, `"definitionRevision":"sha256:0123","id":"again"`},
		{`"maxLength":100,`, `"maxLength":100,"maxLength":100,`},
		{`"maxLength":100,`, `"maxLength":100,"MaxLength":100,`},
		{`"maxLength":100,`, `"max\u004cength":100,"maxLength":100,`},
		{`"maxLength":100,`, `"maxLength":1e400,`},
		{`"maxLength":100,`, `"maxLength":01,`},
		{`"Echoed back."`, `"Echoed\nback. \ud83d\ude00 é"`},
		{`"Echoed back."`, "\"Echoed \xff\""},
		{`"Echoed back."`, `"Echoed \ud800"`},
		{`"Synthetic 1"`, `"Synthetic \u0031"`},
		{`"Synthetic 1"`, `null`},
		{`"policy":"read"`, `"policy":"Write"`},
		{`{"tool":{"type":"string"},`, `{"tool":{"type":"string"},` + strings.Repeat(`"p":1,`, 0) + `"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,`},
		{`{"tool":{"type":"string"},`, `{"tool":{"type":"string"},"a":[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]],`},
	} {
		if !strings.Contains(entry, edit[0]) {
			panic("canonicalEntrySeeds: no " + edit[0])
		}
		e := strings.Replace(entry, edit[0], edit[1], 1)
		seeds = append(seeds, cat(entry, e), cat(e))
	}
	return seeds
}()

// TestRandomFastDecode runs FuzzFastDecode's check over random edits of
// canonicalEntrySeeds in every test run: a byte changed, inserted or removed, or a piece
// of another seed spliced in.
func TestRandomFastDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 9))
	alphabet := []byte(`{}[]:,"\ u0aAIN` + "\x00\x1f\xc3\xa9\xff" + `-1.e+tfn`)
	n := 3000
	if raceEnabled {
		n = 300
	}
	for range n {
		b := []byte(canonicalEntrySeeds[r.IntN(len(canonicalEntrySeeds))])
		for range 1 + r.IntN(3) {
			i := r.IntN(len(b) + 1)
			switch c := alphabet[r.IntN(len(alphabet))]; r.IntN(4) {
			case 0:
				if i < len(b) {
					b[i] = c
				}
			case 1:
				b = append(b[:i], append([]byte{c}, b[i:]...)...)
			case 2:
				if i < len(b) {
					b = append(b[:i], b[i+1:]...)
				}
			default:
				o := canonicalEntrySeeds[r.IntN(len(canonicalEntrySeeds))]
				j := r.IntN(len(o) + 1)
				k := j + r.IntN(min(len(o)-j, 200)+1)
				b = append(b[:i], append([]byte(o[j:k]), b[i:]...)...)
			}
		}
		checkFastDecode(t, b)
	}
}
