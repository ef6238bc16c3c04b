package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

// TestNothingRunsBeforeChecks: a call refused by any check before execution never
// reaches the handler — in particular an invalid after block, so a mutating tool never
// runs and then fails.
func TestNothingRunsBeforeChecks(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	ref := `{"source":"native","snapshotId":"native:42:example","revision":42,"nodeId":"root.0.save"}`
	for _, payload := range []string{
		`{"toolId":"ui.perform_action","arguments":{"reference":` + ref + `,"action":"tap"},"after":{"delayMilliseconds":2001}}`,
		`{"toolId":"ui.perform_action","arguments":{"reference":` + ref + `,"action":"tap"},"after":{"include":["video"]}}`,
		`{"toolId":"ui.perform_action","arguments":{"reference":` + ref + `,"action":"tap"},"after":{"screenshotArguments":"x"}}`,
		`{"toolId":"ui.perform_action","arguments":{"reference":` + ref + `}}`,
		`{"toolId":"ui.perform_action","arguments":[]}`,
	} {
		if code := errorCode(t, f.handle(t, callMsg("c", payload))); code == "" {
			t.Fatalf("%s: succeeded", payload)
		}
	}
	if n := f.count("ui.perform_action"); n != 0 {
		t.Fatalf("ui.perform_action ran %d times", n)
	}
}

// TestAvailabilityEvaluatedEveryTime: on every query and immediately before every
// execution — call, batch item, evidence.
func TestAvailabilityEvaluatedEveryTime(t *testing.T) {
	t.Parallel()
	a := New(Options{})
	var checks atomic.Int32
	avail := func(ctx context.Context) wire.Runtime {
		checks.Add(1)
		return wire.Runtime{Available: true}
	}
	reg := func(id string) {
		if err := Register(a, def(id, id, "t", wire.PolicyRead), func(ctx context.Context, c *Call, in struct{}) (struct{}, error) {
			return struct{}{}, nil
		}, WithAvailability(avail)); err != nil {
			t.Fatal(err)
		}
	}
	reg("t.one")
	reg(wire.VisualTreeToolID)
	f := &fixture{app: a}
	steps := []struct {
		msg  string
		want int32
	}{
		{`{"type":"tool.query","id":"q","payload":{}}`, 2},
		{`{"type":"tool.query","id":"q","payload":{"ifRevision":"x"}}`, 2},
		{callMsg("c", `{"toolId":"t.one"}`), 1},
		{callMsg("c", `{"toolId":"t.one","after":{}}`), 2},
		{`{"type":"tool.batch","id":"b","payload":{"calls":[{"toolId":"t.one"},{"toolId":"t.one","after":{"include":["tree"]}}]}}`, 3},
	}
	for _, s := range steps {
		before := checks.Load()
		f.handle(t, s.msg)
		if got := checks.Load() - before; got != s.want {
			t.Fatalf("%s: %d availability checks, want %d", s.msg, got, s.want)
		}
	}
}

// TestAvailabilityPanic: a panicking availability function makes the tool unavailable;
// the app keeps answering.
func TestAvailabilityPanic(t *testing.T) {
	t.Parallel()
	a := New(Options{})
	err := Register(a, def("t.boom", "Boom", "t", wire.PolicyRead), func(ctx context.Context, c *Call, in struct{}) (struct{}, error) {
		return struct{}{}, nil
	}, WithAvailability(func(ctx context.Context) wire.Runtime { panic("no state") }))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{app: a}
	if code := errorCode(t, f.handle(t, callMsg("c", `{"toolId":"t.boom"}`))); code != wire.CodeUnavailable {
		t.Fatalf("code %q", code)
	}
	_, p := response(t, f.handle(t, `{"type":"tool.query","id":"q","payload":{"detail":"index"}}`))
	if !bytes.Contains(p, []byte(`"runtime":{"available":false,"code":"tool_unavailable"`)) {
		t.Fatalf("catalog: %s", p)
	}
}

// TestCallContext: what a handler sees of its call, for calls and batch items.
func TestCallContext(t *testing.T) {
	t.Parallel()
	a := New(Options{})
	type seenCall struct {
		ToolID, CallID, RequestID, SessionID, Arguments string
		Flat                                            map[string]string
	}
	var seen []seenCall
	d := def("t.ctx", "Ctx", "t", wire.PolicyRead)
	d.ArgumentsSchema = []byte(`{"type":"object","additionalProperties":true}`)
	d.ResultSchema = []byte(`{}`)
	if err := a.Register(Tool{Definition: d, Handler: func(ctx context.Context, c *Call) (any, error) {
		seen = append(seen, seenCall{c.ToolID, c.CallID, c.RequestID, c.SessionID, string(c.Arguments), c.StringArguments})
		c.SetMessage("done")
		return nil, nil
	}}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{app: a}
	_, p := response(t, f.handle(t, `{"type":"tool.call","id":"r1","sessionId":"s1","payload":{"toolId":"t.ctx","callId":"k1","arguments":{ "a" : [1, 2] }}}`))
	if string(p) != `{"toolId":"t.ctx","success":true,"message":"done","result":null}` {
		t.Fatalf("result %s", p)
	}
	f.handle(t, `{"type":"tool.batch","id":"b1","payload":{"calls":[{"toolId":"t.ctx"},{"toolId":"t.ctx","callId":"k2","arguments":null}]}}`)
	want := []seenCall{
		{ToolID: "t.ctx", CallID: "k1", RequestID: "r1", SessionID: "s1", Arguments: `{"a":[1,2]}`},
		{ToolID: "t.ctx", RequestID: "b1", Arguments: `{}`},
		{ToolID: "t.ctx", CallID: "k2", RequestID: "b1", Arguments: `{}`},
	}
	if len(seen) != len(want) {
		t.Fatalf("%d calls", len(seen))
	}
	for i := range want {
		g, w := seen[i], want[i]
		if g.ToolID != w.ToolID || g.CallID != w.CallID || g.RequestID != w.RequestID || g.SessionID != w.SessionID || g.Arguments != w.Arguments || g.Flat != nil {
			t.Errorf("call %d: %+v, want %+v", i, g, w)
		}
	}
}

func TestFlatten(t *testing.T) {
	t.Parallel()
	got, err := flatten(jsontext.Value(`{"s":"a\"b","n":1.50,"i":-3,"t":true,"f":false,"z":null,"o":{ "k" : [1, {"x":null}] },"a":[],"u":"\u00e9"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"s": `a"b`, "n": "1.50", "i": "-3", "t": "true", "f": "false", "o": `{"k":[1,{"x":null}]}`, "a": "[]", "u": "é"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
}

// TestResults: how handler results and errors become responses.
func TestResults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		result any
		err    error
		want   string // payload of the response
	}{
		{"nil", nil, nil, `{"toolId":"t.r","success":true,"result":null}`},
		{"raw", jsontext.Value(` { "a" : 1 } `), nil, `{"toolId":"t.r","success":true,"result":{"a":1}}`},
		{"raw invalid", jsontext.Value(`{"a":`), nil, `"code":"tool_execution_failed"`},
		// The response payload is not re-checked once assembled: the result must be strict.
		{"raw duplicate names", jsontext.Value(`{"a":1,"a":2}`), nil, `"code":"tool_execution_failed"`},
		{"raw invalid UTF-8", jsontext.Value("{\"a\":\"\xff\"}"), nil, `"code":"tool_execution_failed"`},
		{"unmarshalable", make(chan int), nil, `"code":"tool_execution_failed"`},
		{"map sorted", map[string]int{"b": 2, "a": 1}, nil, `"result":{"a":1,"b":2}`},
		{"plain error", nil, errors.New("bad"), `{"code":"tool_execution_failed","message":"bad","retryable":false}`},
		{"empty error", nil, errors.New(""), `{"code":"tool_execution_failed","message":"Tool 't.r' failed.","retryable":false}`},
		{"own code", nil, ToolErrorf("thing_missing", "no %s", "thing"), `{"code":"thing_missing","message":"no thing","retryable":false}`},
		{"own code wrapped", nil, errors.Join(errors.New("ctx"), ToolErrorf("thing_missing", "x")), `"code":"thing_missing"`},
		{"invalid code", nil, &wire.Error{Code: "Not A Code", Message: "m"}, `"code":"tool_execution_failed"`},
		{"empty message", nil, &wire.Error{Code: "odd"}, `{"code":"odd","message":"Tool 't.r' failed.","retryable":false}`},
		{"details", nil, ToolErrorDetails("odd", "m", map[string]int{"n": 1}), `{"code":"odd","message":"m","retryable":false,"details":{"n":1}}`},
		{"details not object", nil, &wire.Error{Code: "odd", Message: "m", Details: jsontext.Value(`[1]`)}, `{"code":"odd","message":"m","retryable":false}`},
		{"details unmarshalable", nil, ToolErrorDetails("odd", "m", make(chan int)), `{"code":"odd","message":"m","retryable":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New(Options{})
			d := def("t.r", "R", "t", wire.PolicyRead)
			d.ArgumentsSchema = []byte(`{"type":"object"}`)
			d.ResultSchema = []byte(`{}`)
			if err := a.Register(Tool{Definition: d, Handler: func(ctx context.Context, c *Call) (any, error) { return tc.result, tc.err }}); err != nil {
				t.Fatal(err)
			}
			_, p := response(t, (&fixture{app: a}).handle(t, callMsg("c", `{"toolId":"t.r"}`)))
			if !strings.Contains(string(p), tc.want) {
				t.Fatalf("payload %s\nwant %s", p, tc.want)
			}
		})
	}
}

// TestResultPayload: the tool.result payload, assembled by hand around the result, is
// what wire.Marshal writes for the same wire.Result, escapes included.
func TestResultPayload(t *testing.T) {
	t.Parallel()
	for _, out := range []wire.Outcome{
		{ToolID: "t.r", Success: true, Result: jsontext.Value(`{"a":1}`)},
		{ToolID: "t.\"q\"", Success: true, Message: "say \"hi\" <é>\n\u2028", Result: jsontext.Value(`[]`)},
		{ToolID: "t.r", Success: true, Result: jsontext.Value(`null`),
			Evidence: map[string]wire.Outcome{"tree": {ToolID: "ui.tree", Success: true, Result: jsontext.Value(`1`)}}},
	} {
		got, err := resultPayload(nil, &out)
		if err != nil {
			t.Fatal(err)
		}
		want, err := wire.Marshal(&wire.Result{ToolID: out.ToolID, Success: true, Message: out.Message, Result: out.Result, Evidence: out.Evidence})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
	if _, err := resultPayload(nil, &wire.Outcome{ToolID: "t.r", Success: true, Message: "\xff", Result: jsontext.Value(`1`)}); err == nil {
		t.Error("a message with invalid UTF-8 was encoded")
	}
}

// TestTypedArgumentsMismatch: an explicit schema looser than the Go type lets through
// arguments the strict decoder refuses: tool_arguments_invalid, handler not run.
func TestTypedArgumentsMismatch(t *testing.T) {
	t.Parallel()
	a := New(Options{})
	d := def("t.typed", "Typed", "t", wire.PolicyRead)
	d.ArgumentsSchema = []byte(`{"type":"object","additionalProperties":true}`)
	ran := false
	if err := Register(a, d, func(ctx context.Context, c *Call, in struct {
		N int `json:"n"`
	}) (int, error) {
		ran = true
		return in.N, nil
	}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{app: a}
	if code := errorCode(t, f.handle(t, callMsg("c", `{"toolId":"t.typed","arguments":{"n":"seven"}}`))); code != wire.CodeArgumentsInvalid || ran {
		t.Fatalf("code %q, ran %v", code, ran)
	}
	if code := errorCode(t, f.handle(t, callMsg("c", `{"toolId":"t.typed","arguments":{"N":1}}`))); code != wire.CodeArgumentsInvalid || ran {
		t.Fatalf("case-variant key: code %q, ran %v", code, ran)
	}
	_, p := response(t, f.handle(t, callMsg("c", `{"toolId":"t.typed","arguments":{"n":7,"other":true}}`)))
	if string(p) != `{"toolId":"t.typed","success":true,"result":7}` {
		t.Fatalf("payload %s", p)
	}
}

// TestNoValuesLogged: argument and result values never reach the log, at any level.
func TestNoValuesLogged(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	f := newFixture(t, Options{Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	f.handle(t, callMsg("c1", `{"toolId":"route.open","arguments":{"route":"s3cr3t-route"}}`))
	f.handle(t, callMsg("c2", `{"toolId":"legacy.echo","arguments":{"token":"s3cr3t-token"}}`))
	f.handle(t, callMsg("c3", `{"toolId":"demo.fail","arguments":{"mode":"panic"}}`))
	log := buf.String()
	if strings.Contains(log, "s3cr3t") {
		t.Fatalf("a value was logged:\n%s", log)
	}
	if !strings.Contains(log, "tool response") || !strings.Contains(log, "tool panicked") {
		t.Fatalf("expected debug and error records:\n%s", log)
	}
}

func TestGuardOptions(t *testing.T) {
	t.Parallel()
	if g := New(Options{}).Guard(); g != catalog.GuardReadWrite {
		t.Fatalf("default guard %+v", g)
	}
	if g := New(Options{Guard: catalog.Guard{DiscoveryEnabled: true, MaxPolicy: "root"}}).Guard(); g != catalog.GuardDisabled {
		t.Fatalf("invalid guard became %+v", g)
	}
	a := New(Options{Guard: catalog.GuardReadOnly})
	if err := a.SetGuard(catalog.Guard{MaxPolicy: "all"}); err == nil || a.Guard() != catalog.GuardReadOnly {
		t.Fatalf("SetGuard accepted an invalid guard: %v", err)
	}
	if err := a.SetGuard(catalog.GuardFullAccess); err != nil || a.Guard() != catalog.GuardFullAccess {
		t.Fatal(err)
	}
}

func TestHandleIgnoresOtherMessages(t *testing.T) {
	t.Parallel()
	a := New(Options{})
	for _, msg := range []string{``, `null`, `[]`, `"tool.call"`, `{"type":"tool.catalog","id":"x"}`, `{"type":"tool.call","capability":"x","id":5}`, `{"type":5}`, `{"id":"x"}`} {
		w := &recorder{}
		ok, err := a.Handle(context.Background(), []byte(msg), w)
		if ok || err != nil || len(w.take()) != 0 {
			t.Errorf("%s: claimed=%v err=%v", msg, ok, err)
		}
	}
}

// TestScanClaim: the lenient scan of undecodable messages.
func TestScanClaim(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		msg  string
		want claim
	}{
		{`{"type":"tool.call","id":"a","sessionId":"s","capability":"tool.exec","x":{"y":[1]}}`, claim{"tool.call", "a", "s", "tool.exec"}},
		{`{"id":"first","id":"second","type":"tool.query"}`, claim{typ: "tool.query", id: "first"}},
		{`{"id":5,"type":"tool.batch"`, claim{typ: "tool.batch"}},
		{`{"type":"tool.call","id":"a",`, claim{typ: "tool.call", id: "a"}},
		{`{"type":"tool.call","id":"\u0061b"}`, claim{typ: "tool.call", id: "ab"}},
		{`[{"type":"tool.call"}]`, claim{}},
		{`{"type":"tool.call","id":"a` + "\xff" + `"}`, claim{typ: "tool.call"}}, // invalid UTF-8: no usable id
	} {
		t.Run(tc.want.typ+" "+tc.want.id, func(t *testing.T) {
			t.Parallel()
			if got := scanClaim([]byte(tc.msg)); got != tc.want {
				t.Errorf("%s: %+v, want %+v", tc.msg, got, tc.want)
			}
		})
	}
}

// TestCompressionThreshold checks the payload sizes the transcript shows, byte-exactly.
func TestCompressionThreshold(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	for _, tc := range []struct {
		n       int
		pattern string
		wrapped bool
	}{{32766, "", false}, {32767, "", false}, {32768, "", true}, {32769, "", true}, {40000, "random", false}} {
		t.Run(fmt.Sprint(tc.n, tc.pattern), func(t *testing.T) {
			msgs := f.handle(t, callMsg("c", `{"toolId":"demo.blob","arguments":{"payloadBytes":`+itoa(tc.n)+`,"pattern":"`+tc.pattern+`"}}`))
			env, p := response(t, msgs)
			if len(p) != tc.n {
				t.Fatalf("payload of %d bytes, want %d", len(p), tc.n)
			}
			if wrapped := bytes.HasPrefix(env.Payload, []byte(`{"$ansightEncoding"`)); wrapped != tc.wrapped {
				t.Errorf("%d bytes (%q): wrapped=%v", tc.n, tc.pattern, wrapped)
			}
		})
	}
}

// TestCompressedRequest: hosts should not compress requests, but the SDK reads them.
func TestCompressedRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	payload := []byte(`{"toolId":"route.open","arguments":{"route":"` + strings.Repeat("z", 40000) + `"}}`)
	wrapped, err := wire.EncodePayload(payload)
	if err != nil || bytes.Equal(wrapped, payload) {
		t.Fatalf("EncodePayload: %v", err)
	}
	env, p := response(t, f.handle(t, `{"type":"tool.call","id":"z","payload":`+string(wrapped)+`}`))
	if env.Type != wire.TypeResult || !bytes.Contains(p, []byte(`"opened":"zzz`)) {
		t.Fatalf("%s %.200s", env.Type, p)
	}
}

// TestDeepNesting: JSON nested deeper than the limit is refused before any handler runs.
func TestDeepNesting(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	deep := strings.Repeat("[", 300) + strings.Repeat("]", 300)
	if code := errorCode(t, f.handle(t, callMsg("d", `{"toolId":"legacy.echo","arguments":{"a":`+deep+`}}`))); code != wire.CodeProtocolInvalidRequest {
		t.Fatalf("code %q", code)
	}
	if f.count("legacy.echo") != 0 {
		t.Fatal("the handler ran")
	}
}

// TestTypedFlattened: a typed flattened-string tool decodes its In from the string map.
func TestTypedFlattened(t *testing.T) {
	t.Parallel()
	a := New(Options{})
	d := def("t.flat", "Flat", "t", wire.PolicyRead)
	d.ArgumentEncoding = wire.ArgumentEncodingFlattenedString
	type in struct {
		Source   string `json:"source,omitzero"`
		MaxDepth int    `json:"maxDepth,omitzero,string"`
		Filter   string `json:"filter,omitzero"`
	}
	if err := Register(a, d, func(ctx context.Context, c *Call, in in) (in, error) { return in, nil }); err != nil {
		t.Fatal(err)
	}
	_, p := response(t, (&fixture{app: a}).handle(t, callMsg("c", `{"toolId":"t.flat","arguments":{"source":"native","maxDepth":3,"filter":{"role":"button"},"none":null}}`)))
	if want := `{"toolId":"t.flat","success":true,"result":{"source":"native","maxDepth":"3","filter":"{\"role\":\"button\"}"}}`; string(p) != want {
		t.Fatalf("payload %s\nwant    %s", p, want)
	}
}

type panickyError struct{}

func (panickyError) Error() string { panic("Error() exploded") }

// TestRuntimePanic: a panic outside the handler's own frame (here in the Error method of
// the error it returned) still yields an answer and leaves the app running.
func TestRuntimePanic(t *testing.T) {
	t.Parallel()
	a := New(Options{})
	d := def("t.p", "P", "t", wire.PolicyRead)
	d.ArgumentsSchema, d.ResultSchema = []byte(`{"type":"object"}`), []byte(`{}`)
	if err := a.Register(Tool{Definition: d, Handler: func(ctx context.Context, c *Call) (any, error) { return nil, panickyError{} }}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{app: a}
	if code := errorCode(t, f.handle(t, callMsg("c", `{"toolId":"t.p"}`))); code != wire.CodeExecutionException {
		t.Fatalf("code %q", code)
	}
	if env, _ := response(t, f.handle(t, `{"type":"tool.query","id":"q","payload":{}}`)); env.Type != wire.TypeCatalog {
		t.Fatal("the app stopped answering")
	}
}
