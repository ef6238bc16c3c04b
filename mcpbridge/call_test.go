package mcpbridge

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/schema"
	"github.com/ansight-go/ansight/wire"
)

func TestCall(t *testing.T) {
	t.Parallel()
	f := oneSession(t)
	c := f.catalogs["s1"]
	c.run["notes.create"] = func(args jsontext.Value) (jsontext.Value, *wire.Error) {
		if !strings.Contains(string(args), `"text":"hello"`) {
			return nil, &wire.Error{Code: wire.CodeArgumentsSchemaInvalid, Message: "text is required",
				Details: jsontext.Value(`{"valid":false,"errors":[{"path":"$.text","code":"required_property_missing","message":"required"}]}`)}
		}
		return jsontext.Value(`{"id":"n1"}`), nil
	}
	c.run["notes.get"] = func(jsontext.Value) (jsontext.Value, *wire.Error) {
		return nil, &wire.Error{Code: "note_not_found", Message: "no note n9", Retryable: false, Details: jsontext.Value(`{"id":"n9"}`)}
	}
	h := newHarness(t, f, Options{})

	t.Run("success", func(t *testing.T) {
		res := h.call(ToolCallAppTool, map[string]any{"toolId": "notes.create", "arguments": map[string]any{"text": "hello"},
			"callId": "c1", "after": map[string]any{"include": []string{"visualTree"}, "delayMilliseconds": 50}})
		var out callOutput
		text(t, res, &out)
		if res.IsError || !out.Success || string(out.Result) != `{"id":"n1"}` || out.CallID != "c1" || out.SessionID != "s1" {
			t.Fatalf("%+v", out)
		}
		got := f.received()
		last := got[len(got)-1]
		if last.After == nil || last.After.DelayMilliseconds != 50 || last.CallID != "c1" {
			t.Errorf("the host did not get the call as written: %+v", last)
		}
		// The call is the MCP client's: its origin names the client ("test", at initialize)
		// and tags its MCP session.
		if !regexp.MustCompile(`^mcp:test#[0-9a-f]{8}$`).MatchString(last.Origin) {
			t.Errorf("origin %q, want mcp:test#<8 hex>", last.Origin)
		}
	})
	t.Run("invalid arguments come back as a tool error", func(t *testing.T) {
		e := errorOf(t, h.call(ToolCallAppTool, map[string]any{"toolId": "notes.create", "arguments": map[string]any{}}))
		if e.Code != wire.CodeArgumentsSchemaInvalid || e.Kind != wire.KindInvalid || !strings.Contains(string(e.Details), "required_property_missing") ||
			!strings.Contains(e.Hint, ToolDescribeApp) {
			t.Fatalf("%+v", e)
		}
	})
	t.Run("a tool's own failure keeps code, message, retryable, details", func(t *testing.T) {
		res := h.call(ToolCallAppTool, map[string]any{"toolId": "notes.get", "arguments": map[string]any{"text": "n9"}})
		e := errorOf(t, res)
		if e.Code != "note_not_found" || e.Message != "no note n9" || e.Retryable || string(e.Details) != `{"id":"n9"}` || e.Kind != wire.KindFailed || e.RefusedBy != "" {
			t.Fatalf("%+v", e)
		}
	})
	t.Run("unknown tool", func(t *testing.T) {
		e := errorOf(t, h.call(ToolCallAppTool, map[string]any{"toolId": "notes.nope"}))
		if e.Code != wire.CodeNotFound || e.RefusedBy != refusedByHost || !strings.Contains(e.Hint, ToolSearchAppTools) {
			t.Fatalf("%+v", e)
		}
	})
	t.Run("unavailable tool", func(t *testing.T) {
		e := errorOf(t, h.call(ToolCallAppTool, map[string]any{"toolId": "sync.push"}))
		// Something must happen first (sign in): not retryable, and the hint says what.
		if e.Code != "signed_out" || e.Kind != wire.KindUnavailable || e.RefusedBy != refusedByHost || e.Retryable ||
			!strings.Contains(e.Hint, "First: Call account.sign_in. Then call again.") {
			t.Fatalf("%+v", e)
		}
	})
	t.Run("critical without --allow-critical", func(t *testing.T) {
		before := len(f.received())
		e := errorOf(t, h.call(ToolCallAppTool, map[string]any{"toolId": "notes.delete_all"}))
		if e.Code != wire.CodeCriticalNotAllowed || e.Kind != wire.KindDenied || e.RefusedBy != refusedByBridge || !strings.Contains(e.Hint, "--allow-critical") {
			t.Fatalf("%+v", e)
		}
		if len(f.received()) != before {
			t.Fatal("the refused call reached the app")
		}
	})
	t.Run("arguments of the meta-tool", func(t *testing.T) {
		for _, args := range []map[string]any{
			{},
			{"toolId": ""},
			{"toolId": "x", "arguments": "[1]"},
			{"toolId": "x", "after": map[string]any{"include": []string{"video"}}},
			{"toolId": "x", "after": map[string]any{"delayMilliseconds": 5000}},
		} {
			if e := errorOf(t, h.call(ToolCallAppTool, args)); e.Code != wire.CodeArgumentsSchemaInvalid {
				t.Errorf("%v: %+v", args, e)
			}
		}
		// JSON text that is not JSON says where.
		e := errorOf(t, h.call(ToolCallAppTool, map[string]any{"toolId": "x", "arguments": "not an object"}))
		if e.Code != wire.CodeArgumentsInvalid || !strings.Contains(e.Message, "/arguments is JSON text") {
			t.Errorf("%+v", e)
		}
	})
	// The portable schema asks for arguments as JSON text; the object itself works too,
	// and both reach the app as the same object.
	t.Run("arguments as JSON text", func(t *testing.T) {
		for _, args := range []any{`{"text":"milk"}`, map[string]any{"text": "milk"}} {
			before := len(f.received())
			if res := h.call(ToolCallAppTool, map[string]any{"toolId": "notes.list", "arguments": args}); res.IsError {
				t.Fatalf("%v: %s", args, text(t, res, nil))
			}
			got := f.received()
			if len(got) != before+1 || string(got[before].Arguments) != `{"text":"milk"}` {
				t.Fatalf("%v: the app received %s", args, got[len(got)-1].Arguments)
			}
		}
	})
}

func TestCallCriticalAllowed(t *testing.T) {
	t.Parallel()
	f := oneSession(t)
	h := newHarness(t, f, Options{AllowCritical: true})
	res := h.call(ToolCallAppTool, map[string]any{"toolId": "notes.delete_all"})
	var out callOutput
	text(t, res, &out)
	if res.IsError || !out.Success {
		t.Fatalf("%+v", out)
	}
}

func TestCallAboveTheGrant(t *testing.T) {
	t.Parallel()
	f := newFakeBackend(t)
	f.addSession("s1", "app", wire.PolicyWrite, demoTools())
	h := newHarness(t, f, Options{AllowCritical: true})
	e := errorOf(t, h.call(ToolCallAppTool, map[string]any{"toolId": "notes.delete_all"}))
	if e.Code != wire.CodePolicyNotGranted || e.RefusedBy != refusedByBridge || !strings.Contains(e.Hint, "--max-tool-policy critical") {
		t.Fatalf("%+v", e)
	}
	if len(f.received()) != 0 {
		t.Fatal("the refused call reached the app")
	}
}

func TestBatch(t *testing.T) {
	t.Parallel()
	f := oneSession(t)
	c := f.catalogs["s1"]
	c.run["notes.get"] = func(jsontext.Value) (jsontext.Value, *wire.Error) {
		return nil, &wire.Error{Code: "note_not_found", Message: "no such note"}
	}
	h := newHarness(t, f, Options{})

	t.Run("success", func(t *testing.T) {
		res := h.call(ToolCallAppTools, map[string]any{"calls": []map[string]any{
			{"toolId": "notes.list", "callId": "a"},
			{"toolId": "notes.create", "arguments": map[string]any{"text": "x"}},
		}})
		var out batchOutput
		text(t, res, &out)
		if res.IsError || !out.Success || out.Completed != 2 || out.Requested != 2 || len(out.Results) != 2 ||
			out.Results[0].CallID != "a" || out.Results[1].ToolID != "notes.create" || string(out.Results[1].Result) != `{"ok":true}` {
			t.Fatalf("%+v", out)
		}
	})
	t.Run("stops at the first failure", func(t *testing.T) {
		res := h.call(ToolCallAppTools, map[string]any{"calls": []map[string]any{
			{"toolId": "notes.get"}, {"toolId": "notes.list"},
		}})
		var out batchOutput
		text(t, res, &out)
		if !res.IsError || out.Success || !out.StoppedEarly || len(out.Results) != 1 || out.Results[0].Error == nil ||
			out.Results[0].Error.Code != "note_not_found" {
			t.Fatalf("%+v", out)
		}
	})
	t.Run("continueOnError", func(t *testing.T) {
		res := h.call(ToolCallAppTools, map[string]any{"continueOnError": true, "calls": []map[string]any{
			{"toolId": "notes.get"}, {"toolId": "notes.list"},
		}})
		var out batchOutput
		text(t, res, &out)
		if !res.IsError || out.Success || out.StoppedEarly || out.Completed != 2 || !out.Results[1].Success {
			t.Fatalf("%+v", out)
		}
	})
	t.Run("a critical call refuses the whole batch before anything runs", func(t *testing.T) {
		before, batches := len(f.received()), f.batches
		res := h.call(ToolCallAppTools, map[string]any{"calls": []map[string]any{
			{"toolId": "notes.list"}, {"toolId": "notes.delete_all"},
		}})
		e := errorOf(t, res)
		if e.Code != wire.CodeCriticalNotAllowed || string(e.Details) != `{"index":1,"toolId":"notes.delete_all"}` {
			t.Fatalf("%+v", e)
		}
		if len(f.received()) != before || f.batches != batches {
			t.Fatal("part of a refused batch ran")
		}
	})
	t.Run("refused by the host as a whole", func(t *testing.T) {
		e := errorOf(t, h.call(ToolCallAppTools, map[string]any{"calls": []map[string]any{{"toolId": "notes.list"}, {"toolId": "sync.push"}}}))
		if e.Code != "signed_out" || e.RefusedBy != refusedByHost {
			t.Fatalf("%+v", e)
		}
	})
	t.Run("size bounds", func(t *testing.T) {
		calls := make([]map[string]any, 33)
		for i := range calls {
			calls[i] = map[string]any{"toolId": "notes.list"}
		}
		for _, args := range []map[string]any{{"calls": []any{}}, {"calls": calls}, {}} {
			if e := errorOf(t, h.call(ToolCallAppTools, args)); e.Code != wire.CodeArgumentsSchemaInvalid {
				t.Errorf("%v", e)
			}
		}
	})
}

func TestTakeScreenshot(t *testing.T) {
	t.Parallel()
	f := oneSession(t)
	path := f.withScreenshot(t, f.catalogs["s1"], 1600, 800)
	h := newHarness(t, f, Options{})
	for _, tc := range []struct {
		name               string
		args               map[string]any
		wantW, wantH       int
		wantScaled         bool
		wantFormatArgument bool
	}{
		{name: "default max width", wantW: 1024, wantH: 512, wantScaled: true},
		{name: "maxWidth", args: map[string]any{"maxWidth": 300}, wantW: 300, wantH: 150, wantScaled: true},
		{name: "format is passed on", args: map[string]any{"format": "png", "maxWidth": 4096}, wantW: 1600, wantH: 800, wantFormatArgument: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := h.call(ToolTakeScreenshot, tc.args)
			var out screenshotOutput
			text(t, res, &out)
			if res.IsError || out.Path != path || out.Width != tc.wantW || out.Height != tc.wantH || out.Scaled != tc.wantScaled ||
				out.OriginalWidth != 1600 || out.CapturedAtUtc.IsZero() {
				t.Fatalf("%+v", out)
			}
			if len(res.Content) != 2 {
				t.Fatalf("want text and image content, got %d items", len(res.Content))
			}
			img, ok := res.Content[1].(*mcp.ImageContent)
			if !ok || img.MIMEType != "image/png" {
				t.Fatalf("content[1] = %T %v", res.Content[1], img)
			}
			cfg, err := png.DecodeConfig(bytes.NewReader(img.Data))
			if err != nil || cfg.Width != tc.wantW || cfg.Height != tc.wantH {
				t.Fatalf("image %dx%d (%v), want %dx%d", cfg.Width, cfg.Height, err, tc.wantW, tc.wantH)
			}
			got := f.received()
			if sent := string(got[len(got)-1].Arguments); strings.Contains(sent, `"format":"png"`) != tc.wantFormatArgument {
				t.Errorf("arguments sent to the app: %s", sent)
			}
		})
	}
}

func TestTakeScreenshotFailures(t *testing.T) {
	t.Parallel()
	f := oneSession(t)
	c := f.catalogs["s1"]
	h := newHarness(t, f, Options{})
	// The default fake answers without an artifact.
	if e := errorOf(t, h.call(ToolTakeScreenshot, nil)); e.Code != wire.CodeNoScreenshot {
		t.Errorf("no artifact: %+v", e)
	}
	c.artifacts[wire.ScreenshotToolID] = func() []hostapi.Artifact {
		return []hostapi.Artifact{{TransferID: "t", Status: "failed", Error: "stalled"}}
	}
	c.run[wire.ScreenshotToolID] = func(jsontext.Value) (jsontext.Value, *wire.Error) { return jsontext.Value(`{}`), nil }
	if e := errorOf(t, h.call(ToolTakeScreenshot, nil)); e.Code != wire.CodeNoScreenshot || !e.Retryable || !strings.Contains(e.Message, "stalled") {
		t.Errorf("failed transfer: %+v", e)
	}
	c.run[wire.ScreenshotToolID] = func(jsontext.Value) (jsontext.Value, *wire.Error) {
		return nil, &wire.Error{Code: "ui_screenshot_failed", Message: "no window"}
	}
	if e := errorOf(t, h.call(ToolTakeScreenshot, nil)); e.Code != "ui_screenshot_failed" {
		t.Errorf("tool failure: %+v", e)
	}
}

func TestFitImage(t *testing.T) {
	t.Parallel()
	noise := func(w, h int) []byte {
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		x := uint32(1)
		for i := range img.Pix {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			img.Pix[i] = byte(x)
		}
		var buf bytes.Buffer
		png.Encode(&buf, img)
		return buf.Bytes()
	}
	const budget = 32 << 10
	small := noise(60, 30)
	got, err := fitImage(small, 1024, 1024, budget)
	if err != nil || got.scaled || !bytes.Equal(got.data, small) || got.mime != "image/png" {
		t.Fatalf("a small image is passed through untouched: %+v %v", got, err)
	}
	// Random pixels do not compress: a 300×300 noise PNG is ~360 KB, over the budget, so it
	// becomes a JPEG, halved while it still does not fit.
	big := noise(300, 300)
	got, err = fitImage(big, 1024, 1024, budget)
	if err != nil || len(got.data) > budget || got.mime != "image/jpeg" || got.origWidth != 300 || !got.scaled {
		t.Fatalf("%d bytes %s %dx%d, %v", len(got.data), got.mime, got.width, got.height, err)
	}
	if _, err := fitImage([]byte("not an image"), 1024, 1024, budget); err == nil {
		t.Fatal("garbage accepted")
	}
}

// revisedBackend is the fake with the session's catalog revision set, as a host reports it,
// counting the summaries authorize asks for.
type revisedBackend struct {
	*fakeBackend
	summaries, lookups atomic.Int32
}

func (r *revisedBackend) Session(ctx context.Context, id string) (*hostapi.Session, error) {
	r.lookups.Add(1)
	s, err := r.fakeBackend.Session(ctx, id)
	if err == nil {
		r.mu.Lock()
		s.Revision = r.catalogs[id].revision
		r.mu.Unlock()
	}
	return s, err
}

func (r *revisedBackend) Tools(ctx context.Context, id string, req hostapi.ToolsRequest) (*hostapi.Tools, error) {
	if req.Detail == hostapi.DetailSummary {
		r.summaries.Add(1)
	}
	return r.fakeBackend.Tools(ctx, id, req)
}

// TestCallPolicyCache: the policies a call is checked against are asked once per session,
// catalog revision and grant, and the session is looked up once: each call is conditional
// on the revision and grant it was judged by. A new revision or grant is the host's
// refusal of the condition, and asks again; a tool that became critical under a new
// revision is refused.
func TestCallPolicyCache(t *testing.T) {
	t.Parallel()
	f := oneSession(t)
	r := &revisedBackend{fakeBackend: f}
	h := connect(t, f, New(r, Options{}))
	call := func(id string) *mcp.CallToolResult {
		return h.call(ToolCallAppTool, map[string]any{"sessionId": "s1", "toolId": id})
	}
	for range 3 {
		if res := call("notes.list"); res.IsError {
			t.Fatal(text(t, res, nil))
		}
	}
	if n, l := r.summaries.Load(), r.lookups.Load(); n != 1 || l != 1 {
		t.Fatalf("%d summaries asked and %d lookups for 3 calls of one tool", n, l)
	}
	for _, c := range f.received() {
		if c.IfRevision != "rev-1" || c.IfGrant != wire.PolicyCritical {
			t.Fatalf("a call not conditional on what it was judged by: %+v", c)
		}
	}
	// The app id given with the session id is checked against the remembered session.
	if e := errorOf(t, h.call(ToolCallAppTool, map[string]any{"sessionId": "s1", "appId": "other", "toolId": "notes.list"})); e.Code != wire.CodeBadRequest {
		t.Fatalf("%+v", e)
	}
	// A new revision in which notes.list is critical: asked again, and refused.
	f.mu.Lock()
	c := f.catalogs["s1"]
	c.revision = "rev-2"
	for i := range c.tools {
		if c.tools[i].ID == "notes.list" {
			c.tools[i].Policy = wire.PolicyCritical
		}
	}
	f.mu.Unlock()
	before := len(f.received())
	if e := errorOf(t, call("notes.list")); e.Code != wire.CodeCriticalNotAllowed {
		t.Fatalf("%+v", e)
	}
	if n := r.summaries.Load(); n != 2 || len(f.received()) != before {
		t.Fatalf("%d summaries; the app received %d more calls", n, len(f.received())-before)
	}
	// A lower grant (same revision): asked again — twice, as the remembered session has no
	// entry for notes.create yet, and then the host refuses the call's condition.
	f.mu.Lock()
	f.sessions[0].MaxToolPolicy = wire.PolicyWrite
	f.mu.Unlock()
	if res := call("notes.create"); res.IsError {
		t.Fatal(text(t, res, nil))
	}
	if n := r.summaries.Load(); n != 4 {
		t.Fatalf("%d summaries after the grant changed", n)
	}
	if c := f.received(); c[len(c)-1].IfGrant != wire.PolicyWrite {
		t.Fatalf("the call after the grant changed: %+v", c[len(c)-1])
	}
	// A session that ended since: looked up again, and refused as the bridge refuses it.
	f.disconnect("s1")
	lookups := r.lookups.Load()
	if e := errorOf(t, call("notes.list")); e.Code != wire.CodeSessionClosed || !strings.Contains(e.Message, "com.example.notes") {
		t.Fatalf("%+v", e)
	}
	if n := r.lookups.Load(); n != lookups+1 {
		t.Fatalf("%d lookups for a call to an ended session", n-lookups)
	}
}

// The meta-tools' input schemas take the schema package's fast validator (no allocation
// for a valid input): ansight_call_app_tool's after.include is a uniqueItems array, which
// sent every call's arguments through the general validator (a tenth of the bridge's own
// CPU per call). Not parallel: AllocsPerRun.
func TestMetaInputsValidateFast(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	for name, tc := range map[string]struct {
		in    jsontext.Value
		input string
	}{
		ToolCallAppTool:                 {callIn, `{"sessionId":"s-1","toolId":"app.get_state","arguments":{}}`},
		ToolCallAppTool + " with after": {callIn, `{"toolId":"ui.perform_action","arguments":{"reference":"e5"},"after":{"include":["visualTree","screenshot"],"delayMilliseconds":100},"snapshot":true,"timeoutMs":5000}`},
		ToolCallAppTools:                {batchIn, `{"calls":[{"toolId":"app.get_state"},{"toolId":"notes.create","arguments":{"title":"Milk"}}]}`},
	} {
		s, err := schema.Compile(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		input := jsontext.Value(tc.input)
		if vs := s.Validate(input); vs != nil {
			t.Fatalf("%s: %v", name, vs)
		}
		if n := testing.AllocsPerRun(50, func() { s.Validate(input) }); n != 0 {
			t.Errorf("%s: %v allocations validating a valid input, want 0 (the general validator)", name, n)
		}
	}
}
