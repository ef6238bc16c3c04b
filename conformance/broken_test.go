package conformance_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/conformance"
	"github.com/ansight-go/ansight/examples/notes/notestest"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// broken is a deliberately broken app: the demo app behind a filter that rewrites
// requests before the app sees them and responses before the suite does.
type broken struct {
	// request rewrites an envelope (decoded generically) before the app sees it.
	request func(env map[string]any)
	// response rewrites a response envelope and its payload (decoded, unwrapped). It
	// returns the payload to send, or nil to send payload re-encoded by the normal rule.
	response func(env map[string]any, payload map[string]any) jsontext.Value
	// framesFirst delays each response until the ASFT frames it announces have been sent.
	framesFirst bool
}

// serve runs the broken app over a Pipe.
func (b *broken) serve(t *testing.T) *conformance.ConnTarget {
	a := newDemoApp(t)
	return serve(t, func(ctx context.Context, conn transport.Conn) {
		for {
			typ, msg, err := conn.Read(ctx)
			if err != nil {
				return
			}
			if typ != transport.MessageText {
				continue
			}
			if b.request != nil {
				msg = rewrite(t, msg, func(env map[string]any) { b.request(env) })
			}
			w := &filterWriter{t: t, b: b, conn: conn}
			a.Handle(ctx, msg, w)
			w.flush(ctx)
		}
	})
}

// filterWriter applies the broken behaviour to what the app writes.
type filterWriter struct {
	t       *testing.T
	b       *broken
	conn    transport.Conn
	pending [][]byte
}

func (w *filterWriter) Write(ctx context.Context, typ transport.MessageType, data []byte) error {
	if typ == transport.MessageText && w.b.response != nil {
		data = rewrite(w.t, data, func(env map[string]any) {
			raw, _ := env["payload"].(jsontext.Value)
			body, err := wire.DecodePayload(raw, 0)
			if err != nil {
				w.t.Errorf("broken app: %v", err)
				return
			}
			var payload map[string]any
			json.Unmarshal(body, &payload) // not every payload is an object
			out := w.b.response(env, payload)
			if out == nil {
				b, _ := json.Marshal(payload, json.Deterministic(true))
				if payload == nil {
					b = body
				}
				out, _ = wire.EncodePayload(b)
			}
			env["payload"] = out
		})
	}
	if typ == transport.MessageText && w.b.framesFirst {
		w.pending = append(w.pending, bytes.Clone(data))
		return nil
	}
	return w.conn.Write(ctx, typ, data)
}

func (w *filterWriter) flush(ctx context.Context) {
	for _, m := range w.pending {
		w.conn.Write(ctx, transport.MessageText, m)
	}
}

// rewrite decodes an envelope generically (the payload kept raw), edits it and encodes it.
func rewrite(t *testing.T, msg []byte, edit func(env map[string]any)) []byte {
	var top map[string]jsontext.Value
	if err := json.Unmarshal(msg, &top); err != nil {
		return msg // malformed on purpose: leave it alone
	}
	env := map[string]any{}
	for k, v := range top {
		if k == "payload" {
			env[k] = v
			continue
		}
		var x any
		json.Unmarshal(v, &x)
		env[k] = x
	}
	edit(env)
	out, err := json.Marshal(env, json.Deterministic(true))
	if err != nil {
		t.Fatalf("broken app: %v", err)
	}
	return out
}

// forceGzip wraps payload whatever its size.
func forceGzip(payload map[string]any) jsontext.Value {
	b, _ := json.Marshal(payload, json.Deterministic(true))
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(b)
	zw.Close()
	return jsontext.Value(fmt.Sprintf(`{"$ansightEncoding":"gzip-base64-json","contentType":"application/json","originalByteCount":%d,"compressedByteCount":%d,"data":%q}`,
		len(b), z.Len(), base64.StdEncoding.EncodeToString(z.Bytes())))
}

// runBroken runs the suite against b and returns the names of the failed checks.
func runBroken(t *testing.T, b *broken) (*conformance.Report, []string) {
	t.Helper()
	rep := conformance.Run(context.Background(), b.serve(t), conformance.Options{AllowWrite: true, Scenario: notestest.ConformanceScenario()})
	var failed []string
	for _, r := range rep.Results {
		if r.Status == conformance.StatusFail {
			failed = append(failed, r.Name)
		}
	}
	return rep, failed
}

// wantFailed checks that each named check failed, with an explanation.
func wantFailed(t *testing.T, rep *conformance.Report, failed []string, names ...string) {
	t.Helper()
	t.Logf("failed checks: %v", failed)
	for _, n := range names {
		if !slices.Contains(failed, n) {
			var out strings.Builder
			rep.WriteText(&out)
			t.Fatalf("check %s did not fail:\n%s", n, out.String())
		}
		if r := rep.Result(n); r.Reason == "" {
			t.Errorf("%s failed without a reason", n)
		}
	}
	if rep.OK() {
		t.Fatal("the report says OK")
	}
}

func isCatalog(env map[string]any) bool { return env["type"] == wire.TypeCatalog }

func TestBrokenCompressesSmallPayloads(t *testing.T) {
	rep, failed := runBroken(t, &broken{response: func(env, payload map[string]any) jsontext.Value {
		if payload == nil || payload["$ansightEncoding"] != nil {
			return nil
		}
		return forceGzip(payload)
	}})
	wantFailed(t, rep, failed, "encoding.small_response", "final.encoding")
	if r := rep.Result("encoding.small_response"); !strings.Contains(r.Reason, "only payloads of at least 32768 bytes") {
		t.Errorf("reason: %s", r.Reason)
	}
}

func TestBrokenNeverCompresses(t *testing.T) {
	rep, failed := runBroken(t, &broken{response: func(env, payload map[string]any) jsontext.Value {
		b, _ := json.Marshal(payload, json.Deterministic(true))
		return b
	}})
	wantFailed(t, rep, failed, "encoding.large_response", "final.encoding")
}

func TestBrokenTotalCountOverFilteredTools(t *testing.T) {
	rep, failed := runBroken(t, &broken{response: func(env, payload map[string]any) jsontext.Value {
		if isCatalog(env) && payload["totalCount"] != nil {
			tools, _ := payload["tools"].([]any)
			cats := map[string]any{}
			for _, x := range tools {
				e := x.(map[string]any)
				n, _ := cats[e["category"].(string)].(float64)
				cats[e["category"].(string)] = n + 1
			}
			payload["totalCount"], payload["categories"] = len(tools), cats
		}
		return nil
	}})
	wantFailed(t, rep, failed, "catalog.totals_ignore_filters")
}

func TestBrokenWrongReplyTo(t *testing.T) {
	rep, failed := runBroken(t, &broken{response: func(env, payload map[string]any) jsontext.Value {
		if r, ok := env["replyTo"].(string); ok {
			env["replyTo"] = r + "-x"
		}
		return nil
	}})
	wantFailed(t, rep, failed, "envelope.correlation", "final.envelopes")
}

func TestBrokenSessionIDNotEchoed(t *testing.T) {
	rep, failed := runBroken(t, &broken{response: func(env, payload map[string]any) jsontext.Value {
		delete(env, "sessionId")
		return nil
	}})
	wantFailed(t, rep, failed, "envelope.correlation", "final.envelopes")
}

func TestBrokenNoUnchangedShortForm(t *testing.T) {
	rep, failed := runBroken(t, &broken{request: func(env map[string]any) {
		if env["type"] != wire.TypeQuery {
			return
		}
		raw, _ := env["payload"].(jsontext.Value)
		var q map[string]any
		if json.Unmarshal(raw, &q) == nil && q != nil {
			delete(q, "ifRevision")
			delete(q, "ifAvailabilityRevision")
			b, _ := json.Marshal(q)
			env["payload"] = jsontext.Value(b)
		}
	}})
	wantFailed(t, rep, failed, "catalog.unchanged", "catalog.availability_changes", "catalog.availability_toggle")
}

func TestBrokenWritesDefaults(t *testing.T) {
	rep, failed := runBroken(t, &broken{response: func(env, payload map[string]any) jsontext.Value {
		if isCatalog(env) {
			tools, _ := payload["tools"].([]any)
			for _, x := range tools {
				if e := x.(map[string]any); e["runtime"] == nil && payload["detail"] != wire.DetailDefinitions {
					e["executable"] = true
				}
			}
			if payload["tools"] != nil {
				payload["unchanged"] = false
			}
		}
		return nil
	}})
	wantFailed(t, rep, failed, "catalog.omitted_defaults")
}

func TestBrokenBatchIgnoresStopRule(t *testing.T) {
	rep, failed := runBroken(t, &broken{request: func(env map[string]any) {
		if env["type"] != wire.TypeBatch {
			return
		}
		raw, _ := env["payload"].(jsontext.Value)
		var q map[string]any
		if json.Unmarshal(raw, &q) == nil && q != nil {
			q["continueOnError"] = true
			b, _ := json.Marshal(q)
			env["payload"] = jsontext.Value(b)
		}
	}})
	wantFailed(t, rep, failed, "batch.stop_on_failure")
}

func TestBrokenFramesBeforeResponse(t *testing.T) {
	rep, failed := runBroken(t, &broken{framesFirst: true})
	wantFailed(t, rep, failed, "asft.transfer", "final.asft_frames")
}

func TestBrokenInvalidRequestCode(t *testing.T) {
	rep, failed := runBroken(t, &broken{response: func(env, payload map[string]any) jsontext.Value {
		if payload["code"] == string(wire.CodeProtocolInvalidRequest) {
			payload["code"] = wire.CodeCallPayloadInvalid
		}
		return nil
	}})
	wantFailed(t, rep, failed, "malformed.invalid_json", "malformed.blank_id", "malformed.duplicate_keys")
}

func TestBrokenUnknownToolCode(t *testing.T) {
	rep, failed := runBroken(t, &broken{response: func(env, payload map[string]any) jsontext.Value {
		if payload["code"] == string(wire.CodeNotFound) {
			payload["code"] = wire.CodeExecutionFailed
		}
		return nil
	}})
	wantFailed(t, rep, failed, "call.unknown_tool", "call.order_lookup")
}

func TestBrokenUnsortedCatalog(t *testing.T) {
	rep, failed := runBroken(t, &broken{response: func(env, payload map[string]any) jsontext.Value {
		if tools, ok := payload["tools"].([]any); ok && isCatalog(env) {
			slices.Reverse(tools)
		}
		return nil
	}})
	wantFailed(t, rep, failed, "catalog.full", "catalog.filter_ids")
}

func TestBrokenChangesListAvailableTools(t *testing.T) {
	rep, failed := runBroken(t, &broken{response: func(env, payload map[string]any) jsontext.Value {
		if ch, ok := payload["changes"].(map[string]any); ok {
			ch["notes.list"] = map[string]any{"available": true}
		}
		return nil
	}})
	wantFailed(t, rep, failed, "catalog.availability_changes")
}

// The suite's own guard: without AllowWrite it never addresses write tools, and an app
// without suitable tools gets skips, not failures.
func TestReadOnlyWithoutTools(t *testing.T) {
	a := app.New(app.Options{})
	rep := conformance.Run(context.Background(), serveApp(t, a), conformance.Options{})
	var out strings.Builder
	rep.WriteText(&out)
	if !rep.OK() {
		t.Fatalf("an app without tools fails:\n%s", out.String())
	}
	for _, n := range []string{"call.result", "batch.size_max", "asft.transfer", "call.unavailable"} {
		if r := rep.Result(n); r.Status != conformance.StatusSkip {
			t.Errorf("%s: %s, want skip", n, r.Status)
		}
	}
}

// editCall rewrites the arguments of every tool.call of toolID before the app sees it.
func editCall(toolID string, edit func(args map[string]any)) func(env map[string]any) {
	return func(env map[string]any) {
		if env["type"] != wire.TypeCall {
			return
		}
		raw, _ := env["payload"].(jsontext.Value)
		var p map[string]any
		if json.Unmarshal(raw, &p) != nil || p == nil || p["toolId"] != toolID {
			return
		}
		if args, ok := p["arguments"].(map[string]any); ok {
			edit(args)
		}
		b, _ := json.Marshal(p)
		env["payload"] = jsontext.Value(b)
	}
}

// An app whose ui.get_visual_tree does not know includeComputedStyles (the SDK before
// issue 12) refuses the official host's default arguments.
func TestBrokenRefusesTheOfficialHostsTreeDefaults(t *testing.T) {
	rep, failed := runBroken(t, &broken{request: editCall(wire.VisualTreeToolID, func(args map[string]any) {
		if v, ok := args["includeComputedStyles"]; ok {
			delete(args, "includeComputedStyles")
			args["notAnArgument"] = v // refused like an undeclared argument
		}
	})})
	wantFailed(t, rep, failed, "interop.official_host_ui_defaults")
}

// An app that labels a PNG "jpeg" fails: the check reads the image's first bytes.
func TestBrokenScreenshotJPEGIsPNG(t *testing.T) {
	rep, failed := runBroken(t, &broken{
		request: editCall(wire.ScreenshotToolID, func(args map[string]any) {
			if args["format"] == "jpeg" {
				args["format"] = "png"
			}
		}),
		response: func(env, payload map[string]any) jsontext.Value {
			if r, ok := payload["result"].(map[string]any); ok && r["mimeType"] == "image/png" {
				r["mimeType"], r["format"] = "image/jpeg", "jpeg"
			}
			return nil
		},
	})
	wantFailed(t, rep, failed, "interop.official_host_ui_defaults")
	if r := rep.Result("interop.official_host_ui_defaults"); !strings.Contains(r.Reason, "89 50 4e 47") {
		t.Errorf("reason: %s", r.Reason)
	}
}

// editResult rewrites the result of one tool's successful calls.
func editResult(toolID string, edit func(r map[string]any)) func(env, payload map[string]any) jsontext.Value {
	return func(env, payload map[string]any) jsontext.Value {
		if r, ok := payload["result"].(map[string]any); ok && env["type"] == wire.TypeResult && payload["toolId"] == toolID {
			edit(r)
		}
		return nil
	}
}

// Apps whose standard tools answer unlike the official SDKs fail the tools.* checks: each
// check can fail.
func TestBrokenStandardTools(t *testing.T) {
	for _, tc := range []struct {
		name, check string
		b           *broken
	}{
		{"a download whose next request forgets the version", "tools.files", &broken{response: editResult("files.download_file", func(r map[string]any) {
			if next, ok := r["nextRequest"].(map[string]any); ok {
				delete(next["arguments"].(map[string]any), "expectedVersion")
			}
		})}},
		{"a version that is not size:ticks", "tools.files", &broken{response: editResult("files.read_file", func(r map[string]any) {
			r["version"] = "W/\"abc\""
		})}},
		{"a query that runs two statements", "tools.data", &broken{request: editCall("data.query", func(args map[string]any) {
			if args["sql"] == "SELECT 1; SELECT 2" {
				args["sql"] = "SELECT 1"
			}
		})}},
		{"cells without their storage type", "tools.data", &broken{response: editResult("data.query", func(r map[string]any) {
			for _, row := range r["rowValues"].([]any) {
				for i := range row.([]any) {
					row.([]any)[i] = "1"
				}
			}
		})}},
		{"keys out of order", "tools.prefs", &broken{response: editResult("prefs.list_keys", func(r map[string]any) {
			slices.Reverse(r["keys"].([]any))
		})}},
		{"an artifact descriptor inside the result", "tools.artifacts", &broken{response: editResult("artifacts.request", func(r map[string]any) {
			inner := map[string]any{}
			for k, v := range r {
				inner[k] = v
				delete(r, k)
			}
			r["transfer"] = inner
		})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, failed := runBroken(t, tc.b)
			wantFailed(t, rep, failed, tc.check)
			if r := rep.Result(tc.check); strings.Contains(r.Reason, "the suite panicked") {
				t.Errorf("%s: %s", tc.check, r.Reason)
			}
		})
	}
}
