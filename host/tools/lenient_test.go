package tools

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/ansight-go/ansight/wire"
)

// TestLenientResponses is issue 12.6 for tool responses, each with the exact message an
// SDK writes: where the official host takes the answer, the host takes it too.
func TestLenientResponses(t *testing.T) {
	t.Parallel()
	t.Run("UnknownPolicySkipped", func(t *testing.T) {
		// An app with a policy level this host does not know: that entry is skipped with a
		// warning, the rest of the catalog is usable.
		const index = `{"schema":"ansight.tool-catalog.v3","revision":"sha256:aa","tools":[` +
			`{"id":"a.admin","name":"Admin","description":"","category":"a","policy":"admin","definitionRevision":"sha256:01"},` +
			`{"id":"t.read","name":"Read","description":"","category":"t","policy":"read","definitionRevision":"def-read-1","runtime":{"available":false,"code":"not_ready","executable":false},"executable":false},` +
			`{"id":"t.write","name":"Write","description":"","category":"t","policy":"Write","definitionRevision":"sha256:03"}],` +
			`"count":3,"detail":"index","availabilityRevision":"sha256:bb","evaluatedAtUtc":"2026-03-20T10:00:00Z","totalCount":3,"categories":{"a":1,"t":2}}`
		var logs bytes.Buffer
		hs := newHarness(t, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, func(req *wire.Envelope) []msg {
			return []msg{reply(t, req, wire.TypeCatalog, index)}
		})
		cat, err := hs.c.Index(t.Context())
		if err != nil {
			t.Fatalf("index with an unknown policy: %v", err)
		}
		if len(cat.Tools) != 2 || cat.Tool("t.read") == nil || cat.Tool("t.write") == nil || cat.Tool("a.admin") != nil {
			t.Fatalf("tools %+v", cat.Tools)
		}
		// Positions still line up with the payload: t.read keeps its Swift-style
		// executable:false inside runtime.
		if e := cat.Tool("t.read"); e.IsExecutable() {
			t.Errorf("t.read executable: %+v", e)
		}
		if !strings.Contains(logs.String(), "unknown policy") || !strings.Contains(logs.String(), "a.admin") {
			t.Errorf("no warning logged: %s", logs.String())
		}
	})

	t.Run("NumericCallID", func(t *testing.T) {
		app := newFakeApp(t, readTool)
		hs := newHarness(t, Options{}, nil)
		hs.setHandler(func(req *wire.Envelope) []msg {
			if req.Type != wire.TypeBatch {
				return app.handler()(req)
			}
			return []msg{reply(t, req, wire.TypeBatchResult, `{"success":true,"completed":2,"requested":2,"stoppedEarly":false,"results":[`+
				`{"toolId":"t.read","success":true,"message":null,"result":{"ok":true},"evidence":null,"index":0,"callId":7},`+
				`{"toolId":"t.read","success":true,"message":null,"result":{},"evidence":null,"index":1,"callId":null}]}`)}
		})
		res, err := hs.c.Batch(t.Context(), false, []wire.Call{{ToolID: "t.read", CallID: "7"}, {ToolID: "t.read"}})
		if err != nil {
			t.Fatalf("batch with a numeric callId: %v", err)
		}
		if r := res.Payload.Results; len(r) != 2 || r[0].CallID != "7" || r[1].CallID != "" || !r[0].Success {
			t.Fatalf("results %+v", r)
		}
	})

	t.Run("ErrorCode", func(t *testing.T) {
		// An older Kotlin runtime writes errorCode instead of code, in tool.error and in a
		// failed batch item's error.
		app := newFakeApp(t, readTool)
		hs := newHarness(t, Options{}, nil)
		hs.setHandler(func(req *wire.Envelope) []msg {
			switch req.Type {
			case wire.TypeCall:
				return []msg{reply(t, req, wire.TypeError, `{"errorCode":"ui_wait_timeout","message":"The condition did not hold within 5000 ms.","retryable":false,"details":{"matched":false}}`)}
			case wire.TypeBatch:
				return []msg{reply(t, req, wire.TypeBatchResult, `{"success":false,"completed":1,"requested":1,"stoppedEarly":false,"results":[`+
					`{"toolId":"t.read","success":false,"message":"boom","error":{"errorCode":"tool_execution_failed","message":"boom","retryable":false},"index":0,"callId":null}]}`)}
			}
			return app.handler()(req)
		})
		_, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read"})
		if we, ok := errorsAs[*wire.Error](err); !ok || we.Code != "ui_wait_timeout" || we.Message == "" {
			t.Fatalf("call: %v", err)
		}
		res, err := hs.c.Batch(t.Context(), false, []wire.Call{{ToolID: "t.read"}})
		if err != nil {
			t.Fatal(err)
		}
		if e := res.Payload.Results[0].Error; e == nil || e.Code != wire.CodeExecutionFailed {
			t.Fatalf("item error %+v", e)
		}
	})
}
