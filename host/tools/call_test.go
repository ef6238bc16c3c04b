package tools

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

func TestCallRefusals(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, threeTools()...)
	app.tools = append(app.tools, tool("e.gone", wire.PolicyRead, "def-e"))
	app.unavailable["e.gone"] = wire.Runtime{Available: false, Reason: "not now"}
	hs := newHarness(t, Options{MaxToolPolicy: wire.PolicyWrite}, app.handler())
	cases := []struct {
		toolID string
		code   wire.Code
	}{
		{"c.critical", wire.CodePolicyNotGranted},
		{"zzz.unknown", wire.CodeNotFound},
		{"e.gone", wire.CodeUnavailable},
		{"", wire.CodeCallMissingID},
	}
	for _, tc := range cases {
		t.Run(tc.toolID, func(t *testing.T) {
			_, err := hs.c.Call(t.Context(), wire.Call{ToolID: tc.toolID})
			re, ok := errorsAs[*RefusalError](err)
			if !ok || re.Err.Code != tc.code || wire.CodeOf(err) != tc.code || re.ToolID != tc.toolID {
				t.Errorf("%q: err = %v, want refusal %s", tc.toolID, err, tc.code)
			}
			if _, ok := errorsAs[*TransportError](err); ok {
				t.Errorf("%q: a refusal is not a transport error", tc.toolID)
			}
		})
	}
	// The first call fetched the index (no definitions: nothing to validate); the refusals
	// that a newer catalog could lift (unknown, unavailable) were each decided on a fresh
	// conditional index query; the grant and a missing id needed none.
	if got := detailsOf(app.queryLog()); !slices.Equal(got, []string{"index", "index?rev-1/avail-1", "index?rev-1/avail-1"}) {
		t.Errorf("queries %q", got)
	}
	if n := app.callCount(); n != 0 {
		t.Errorf("%d refused calls reached the app", n)
	}
	// Allowed tools pass.
	if _, err := hs.c.Call(t.Context(), wire.Call{ToolID: "b.write", Arguments: jsontext.Value(`{"n":1}`)}); err != nil {
		t.Fatal(err)
	}
}

// TestCallSeesAvailabilityChange: a tool the cached catalog lists as unavailable is not
// refused once the app made it available; the host checks a fresh index first.
func TestCallSeesAvailabilityChange(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, threeTools()...)
	app.unavailable["a.read"] = wire.Runtime{Available: false, Code: "not_loaded", Reason: "not now"}
	hs := newHarness(t, Options{MaxToolPolicy: wire.PolicyWrite}, app.handler())
	if _, err := hs.c.Call(t.Context(), wire.Call{ToolID: "a.read"}); wire.CodeOf(err) != "not_loaded" {
		t.Fatalf("err = %v, want refusal not_loaded", err)
	}
	app.set(func(a *fakeApp) {
		a.availabilityRevision = "avail-2"
		delete(a.unavailable, "a.read")
	})
	if _, err := hs.c.Call(t.Context(), wire.Call{ToolID: "a.read"}); err != nil {
		t.Fatalf("call after the tool became available: %v", err)
	}
	if n := app.callCount(); n != 1 {
		t.Errorf("%d calls reached the app, want 1", n)
	}
}

func TestCallValidatesArguments(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, threeTools()...)
	flat := tool("f.flat", wire.PolicyRead, "def-f")
	flat.ArgumentEncoding = wire.ArgumentEncodingFlattenedString
	app.tools = append(app.tools, flat)
	hs := newHarness(t, Options{MaxToolPolicy: wire.PolicyCritical, ValidateArguments: true}, app.handler())

	_, err := hs.c.Call(t.Context(), wire.Call{ToolID: "a.read", Arguments: jsontext.Value(`{"n":"one","extra":true}`)})
	re, ok := errorsAs[*RefusalError](err)
	if !ok || re.Err.Code != wire.CodeArgumentsSchemaInvalid {
		t.Fatalf("err = %v", err)
	}
	var details struct {
		Valid  bool `json:"valid"`
		Errors []struct {
			Path    string `json:"path"`
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := wire.Unmarshal(re.Err.Details, &details); err != nil || details.Valid || len(details.Errors) != 2 {
		t.Fatalf("details %s (%v)", re.Err.Details, err)
	}
	// Only a.read's definition was fetched.
	if got, want := detailsOf(app.queryLog()), []string{"index", "definitions a.read"}; !slices.Equal(got, want) {
		t.Errorf("queries %q, want %q", got, want)
	}
	// Valid and absent arguments pass; flattened-string tools are not validated.
	for _, c := range []wire.Call{
		{ToolID: "a.read", Arguments: jsontext.Value(`{"n":1}`)},
		{ToolID: "a.read"},
		{ToolID: "f.flat", Arguments: jsontext.Value(`{"anything":"goes"}`)},
	} {
		if _, err := hs.c.Call(t.Context(), c); err != nil {
			t.Errorf("%s %s: %v", c.ToolID, c.Arguments, err)
		}
	}
	if n := app.callCount(); n != 3 {
		t.Errorf("%d calls sent, want 3", n)
	}
	// Batches are validated per item.
	_, err = hs.c.Batch(t.Context(), false, []wire.Call{{ToolID: "a.read"}, {ToolID: "b.write", Arguments: jsontext.Value(`[]`)}})
	if re, ok := errorsAs[*RefusalError](err); !ok || re.Index != 1 || re.Err.Code != wire.CodeArgumentsSchemaInvalid {
		t.Fatalf("batch err = %v", err)
	}
}

func TestCallResultKeepsEvidence(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, readTool)
	app.onCall = func(req *wire.Envelope, c wire.Call) []msg {
		return []msg{reply(t, req, wire.TypeResult, `{"toolId":"t.read","success":true,"message":"done","result":{"v":1},`+
			`"evidence":{"visualTree":{"toolId":"ui.get_visual_tree","success":true,"result":{"root":{}}},`+
			`"screenshot":{"toolId":"ui.get_screenshot","success":false,"error":{"code":"tool_unavailable","message":"no screen","retryable":true}}},"extra":"kept"}`)}
	}
	hs := newHarness(t, Options{}, app.handler())
	res, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read", After: &wire.After{Include: []string{"visualTree", "screenshot"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Payload.Message != "done" || len(res.Payload.Evidence) != 2 {
		t.Fatalf("payload %+v", res.Payload)
	}
	if ev := res.Payload.Evidence["screenshot"]; ev.Success || ev.Error == nil || ev.Error.Code != wire.CodeUnavailable {
		t.Errorf("screenshot evidence %+v", ev)
	}
	if !strings.Contains(string(res.Raw), `"extra":"kept"`) {
		t.Errorf("raw payload lost a member: %s", res.Raw)
	}
	var sent wire.Call
	app.set(func(a *fakeApp) { sent = a.calls[0] })
	if sent.After == nil || !slices.Equal(sent.After.Include, []string{"visualTree", "screenshot"}) {
		t.Errorf("after not sent: %+v", sent.After)
	}
}

func TestCallToolError(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, readTool)
	app.onCall = func(req *wire.Envelope, c wire.Call) []msg {
		return []msg{reply(t, req, wire.TypeError, `{"code":"stale_node_reference","message":"gone","retryable":false,"details":{"refreshWith":"ui.query_nodes"}}`)}
	}
	hs := newHarness(t, Options{}, app.handler())
	_, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read"})
	we, ok := errorsAs[*wire.Error](err)
	if !ok || we.Code != wire.CodeStaleNodeReference || string(we.Details) != `{"refreshWith":"ui.query_nodes"}` {
		t.Fatalf("err = %v", err)
	}
	if _, ok := errorsAs[*RefusalError](err); ok {
		t.Error("an app error is not a refusal")
	}
}

func TestCallSuccessFalse(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, readTool)
	app.onCall = func(req *wire.Envelope, c wire.Call) []msg {
		return []msg{reply(t, req, wire.TypeResult, `{"toolId":"t.read","success":false,"message":"nope"}`)}
	}
	hs := newHarness(t, Options{}, app.handler())
	_, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read"})
	if we, ok := errorsAs[*wire.Error](err); !ok || we.Code != wire.CodeExecutionFailed || we.Message != "nope" {
		t.Fatalf("err = %v", err)
	}
}

func TestBatch(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, threeTools()...)
	hs := newHarness(t, Options{MaxToolPolicy: wire.PolicyWrite}, app.handler())
	calls := []wire.Call{{ToolID: "a.read", CallID: "one"}, {ToolID: "b.write", Arguments: jsontext.Value(`{"n":2}`)}}
	res, err := hs.c.Batch(t.Context(), true, calls)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Payload
	if !p.Success || p.Requested != 2 || len(p.Results) != 2 || p.Results[0].CallID != "one" || p.Results[1].Index != 1 {
		t.Fatalf("batch result %+v", p)
	}
	var sent wire.Batch
	app.set(func(a *fakeApp) { sent = a.batches[0] })
	if !sent.ContinueOnError || len(sent.Calls) != 2 || string(sent.Calls[1]) != `{"toolId":"b.write","arguments":{"n":2}}` {
		t.Errorf("sent %+v", sent)
	}

	for _, n := range []int{0, wire.MaxBatchSize + 1} {
		_, err := hs.c.Batch(t.Context(), false, make([]wire.Call, n))
		if wire.CodeOf(err) != wire.CodeBatchSizeInvalid {
			t.Errorf("%d calls: %v", n, err)
		}
	}
	_, err = hs.c.Batch(t.Context(), false, []wire.Call{{ToolID: "a.read"}, {ToolID: "a.read"}, {ToolID: "c.critical"}})
	if re, ok := errorsAs[*RefusalError](err); !ok || re.Index != 2 || re.Err.Code != wire.CodePolicyNotGranted {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "batch call 2") {
		t.Errorf("message %q", err)
	}

	app.set(func(a *fakeApp) {
		a.onBatch = func(req *wire.Envelope, b wire.Batch) []msg {
			return []msg{reply(t, req, wire.TypeError, wire.NewError(wire.CodeBatchPayloadInvalid, "bad"))}
		}
	})
	_, err = hs.c.Batch(t.Context(), false, calls)
	if we, ok := errorsAs[*wire.Error](err); !ok || we.Code != wire.CodeBatchPayloadInvalid {
		t.Fatalf("err = %v", err)
	}
	if n := app.callCount(); n != 2 {
		t.Errorf("%d batches sent, want 2", n)
	}
}

// TestBatchContinueOnErrorRefusals: with continueOnError, calls the host refuses (a tool
// the catalog does not list, one above the grant) fail on their own and the others run; the
// refused calls never reach the app, and every call is listed at its index.
func TestBatchContinueOnErrorRefusals(t *testing.T) {
	app := newFakeApp(t, threeTools()...)
	hs := newHarness(t, Options{MaxToolPolicy: wire.PolicyWrite}, app.handler())
	calls := []wire.Call{{ToolID: "a.read", CallID: "first"}, {ToolID: "no.such_tool", CallID: "unknown"},
		{ToolID: "c.critical"}, {ToolID: "b.write", CallID: "last", Arguments: jsontext.Value(`{"n":1}`)}}
	res, err := hs.c.Batch(t.Context(), true, calls)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Payload
	if p.Success || p.Requested != 4 || p.Completed != 2 || p.StoppedEarly || len(p.Results) != 4 {
		t.Fatalf("batch result %+v", p)
	}
	for i, want := range []struct {
		code   wire.Code
		callID string
	}{{"", "first"}, {wire.CodeNotFound, "unknown"}, {wire.CodePolicyNotGranted, ""}, {"", "last"}} {
		it := p.Results[i]
		if it.Index != i || it.CallID != want.callID || it.ToolID != calls[i].ToolID || it.Success != (want.code == "") ||
			want.code != "" && (it.Error == nil || it.Error.Code != want.code) {
			t.Errorf("item %d = %+v, want code %q", i, it, want.code)
		}
	}
	if !slices.Equal(res.Refused, []int{1, 2}) {
		t.Errorf("refused %v", res.Refused)
	}
	var sent wire.Batch
	app.set(func(a *fakeApp) { sent = a.batches[len(a.batches)-1] })
	if len(sent.Calls) != 2 || !strings.Contains(string(sent.Calls[1]), `"b.write"`) {
		t.Errorf("sent %+v", sent)
	}
	var raw wire.BatchResult
	if err := wire.Unmarshal(res.Raw, &raw); err != nil || len(raw.Results) != 4 || raw.Results[3].Index != 3 {
		t.Errorf("raw %s: %v", res.Raw, err)
	}

	// Every call refused: nothing is sent, every call fails.
	before := app.callCount()
	res, err = hs.c.Batch(t.Context(), true, []wire.Call{{ToolID: "no.such_tool"}})
	if err != nil || res.Payload.Success || len(res.Payload.Results) != 1 || res.Payload.Results[0].Error.Code != wire.CodeNotFound || app.callCount() != before {
		t.Fatalf("all refused: %+v %v", res, err)
	}
	// Without continueOnError the whole batch is refused, as before.
	if _, err := hs.c.Batch(t.Context(), false, calls); err == nil || !strings.Contains(err.Error(), "batch call 1") {
		t.Fatalf("without continueOnError: %v", err)
	}
}

func TestCompressedResponses(t *testing.T) {
	t.Parallel()
	big := `{"toolId":"t.read","success":true,"result":{"blob":"` + strings.Repeat("abcd", 20000) + `"}}`
	wrapped, err := wire.EncodePayload([]byte(big))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(wrapped), "gzip-base64-json") {
		t.Fatal("test payload was not compressed")
	}
	app := newFakeApp(t, readTool)
	app.onCall = func(req *wire.Envelope, c wire.Call) []msg {
		return []msg{reply(t, req, wire.TypeResult, jsontext.Value(wrapped))}
	}
	hs := newHarness(t, Options{}, app.handler())
	res, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read"})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Raw) != big {
		t.Errorf("inflated payload differs (%d bytes)", len(res.Raw))
	}
}

func TestCompressionBombRejected(t *testing.T) {
	t.Parallel()
	// 8 MiB of zeros inflate from a few KiB; the client's cap is 1 MiB.
	bomb, err := wire.EncodePayload([]byte(`{"toolId":"t.read","success":true,"result":{"z":"` + strings.Repeat("0", 8<<20) + `"}}`))
	if err != nil {
		t.Fatal(err)
	}
	lying := regexp.MustCompile(`"originalByteCount":\d+`).ReplaceAllString(string(bomb), `"originalByteCount":1000`)
	if lying == string(bomb) {
		t.Fatal("originalByteCount not found")
	}
	for name, payload := range map[string]string{"declared": string(bomb), "lying count": lying} {
		t.Run(name, func(t *testing.T) {
			app := newFakeApp(t, readTool)
			app.onCall = func(req *wire.Envelope, c wire.Call) []msg {
				return []msg{reply(t, req, wire.TypeResult, payload)}
			}
			hs := newHarness(t, Options{MaxInflatedBytes: 1 << 20}, app.handler())
			_, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read"})
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}
