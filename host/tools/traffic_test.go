package tools

import (
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

type trafficLog struct {
	mu sync.Mutex
	ev []wire.TrafficEvent
}

func (l *trafficLog) add(e wire.TrafficEvent) {
	l.mu.Lock()
	l.ev = append(l.ev, e)
	l.mu.Unlock()
}

func (l *trafficLog) events() []wire.TrafficEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]wire.TrafficEvent(nil), l.ev...)
}

func TestTrafficCallsAndErrors(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, readTool)
	big := `{"text":"` + strings.Repeat("abc", wire.CompressionThreshold) + `"}`
	app.onCall = func(req *wire.Envelope, c wire.Call) []msg {
		if string(c.Arguments) == `{"fail":true}` {
			return []msg{reply(t, req, wire.TypeError, `{"code":"boom","message":"it failed"}`)}
		}
		payload, err := wire.EncodePayload([]byte(`{"toolId":"t.read","success":true,"result":` + big + `}`))
		if err != nil {
			t.Fatal(err)
		}
		return []msg{reply(t, req, wire.TypeResult, payload)}
	}
	var log trafficLog
	hs := newHarness(t, Options{SessionID: "s-1", OnTraffic: log.add}, app.handler())
	if _, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read", Arguments: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read", Arguments: []byte(`{"fail":true}`)}); err == nil {
		t.Fatal("want the tool's error")
	}
	ev := log.events()
	// query + catalog (the call checks the catalog first), then two calls and responses.
	if len(ev) != 6 {
		t.Fatalf("%d events: %+v", len(ev), ev)
	}
	q, cat, req, res, req2, res2 := ev[0], ev[1], ev[2], ev[3], ev[4], ev[5]
	if q.Kind != wire.TrafficRequest || q.Type != wire.TypeQuery || cat.Kind != wire.TrafficResponse || cat.Type != wire.TypeCatalog ||
		cat.RequestID != q.RequestID || cat.Outcome != wire.TrafficOK {
		t.Errorf("query %+v\ncatalog %+v", q, cat)
	}
	if req.Type != wire.TypeCall || len(req.ToolIDs) != 1 || req.ToolIDs[0] != "t.read" || req.SessionID != "s-1" || req.Bytes <= req.PayloadBytes {
		t.Errorf("request %+v", req)
	}
	if res.Type != wire.TypeResult || !res.Compressed || res.PayloadBytes <= res.EncodedBytes || res.Bytes < res.EncodedBytes ||
		res.RequestID != req.RequestID || res.ToolIDs[0] != "t.read" || res.Outcome != wire.TrafficOK || res.Duration < 0 {
		t.Errorf("response %+v", res)
	}
	if res2.Type != wire.TypeError || res2.Outcome != wire.TrafficError || res2.ErrorCode != "boom" || res2.Compressed ||
		res2.RequestID != req2.RequestID {
		t.Errorf("error response %+v", res2)
	}
}

func TestTrafficBatchToolIDs(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, readTool)
	app.onBatch = func(req *wire.Envelope, b wire.Batch) []msg {
		return []msg{reply(t, req, wire.TypeBatchResult, `{"success":false,"completed":1,"requested":2,"stoppedEarly":true,"results":[]}`)}
	}
	var log trafficLog
	hs := newHarness(t, Options{OnTraffic: log.add}, app.handler())
	if _, err := hs.c.Batch(t.Context(), false, []wire.Call{{ToolID: "t.read"}, {ToolID: "t.read", CallID: "b"}}); err != nil {
		t.Fatal(err)
	}
	ev := log.events()
	last := ev[len(ev)-1]
	if last.Type != wire.TypeBatchResult || last.Outcome != wire.TrafficError || len(last.ToolIDs) != 2 || last.ToolIDs[1] != "t.read" {
		t.Errorf("batch response %+v", last)
	}
}

func TestTrafficTransfer(t *testing.T) {
	t.Parallel()
	data := randomBytes(100_000)
	app := transferApp(t, desc(id1, "shot.png", len(data)), chunks(id1, data, 30_000)...)
	var log trafficLog
	var progress progressLog
	hs := newHarness(t, Options{OnTraffic: log.add, OnTransfer: progress.add}, app.handler())
	if _, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read"}); err != nil {
		t.Fatal(err)
	}
	var tr []wire.TrafficEvent
	for _, e := range log.events() {
		if e.Kind == wire.TrafficTransfer {
			tr = append(tr, e)
		}
	}
	if len(tr) != 1 {
		t.Fatalf("transfers %+v", tr)
	}
	e := tr[0]
	if e.TransferID != id1 || e.Outcome != wire.TrafficOK || e.ReceivedBytes != int64(len(data)) || e.SizeBytes != int64(len(data)) ||
		e.Frames != 4 || e.FileName != "shot.png" || e.Path == "" || e.MimeType != "image/png" {
		t.Errorf("transfer %+v", e)
	}
	progress.mu.Lock()
	defer progress.mu.Unlock()
	if n := len(progress.ps); n != 6 { // still forwarded: announce, 4 chunks, complete
		t.Errorf("OnTransfer saw %d reports", n)
	}
}

// TestTrafficRequestPayloadKept: a request's traffic payload belongs to the event. The
// client writes requests in pooled buffers and reuses them for later requests, while a
// recorder keeps events after the call (it stores them on its own goroutine).
func TestTrafficRequestPayloadKept(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var calls []wire.TrafficEvent
	app := newFakeApp(t, threeTools()...)
	hs := newHarness(t, Options{MaxToolPolicy: wire.PolicyWrite, OnTraffic: func(ev wire.TrafficEvent) {
		if ev.Kind == wire.TrafficRequest && ev.Type == wire.TypeCall {
			mu.Lock()
			calls = append(calls, ev)
			mu.Unlock()
		}
	}}, app.handler())
	for _, call := range []wire.Call{{ToolID: "a.read"}, {ToolID: "b.write", Arguments: jsontext.Value(`{"n":1}`)}} {
		if _, err := hs.c.Call(t.Context(), call); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 2 {
		t.Fatalf("%d call requests reported", len(calls))
	}
	for i, want := range []string{"a.read", "b.write"} {
		var c wire.Call
		if err := wire.Unmarshal(calls[i].Payload, &c); err != nil || c.ToolID != want {
			t.Errorf("request %d payload %s (%v), want a call of %s", i, calls[i].Payload, err, want)
		}
	}
}

// TestTrafficOrigin: a call's origin (WithOrigin) is in its request's, its response's and a
// refusal's traffic events; a call without one reports none.
func TestTrafficOrigin(t *testing.T) {
	t.Parallel()
	for _, origin := range []string{"mcp:claude-code", ""} {
		t.Run("origin="+origin, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var events []wire.TrafficEvent
			app := newFakeApp(t, threeTools()...)
			hs := newHarness(t, Options{MaxToolPolicy: wire.PolicyWrite, OnTraffic: func(ev wire.TrafficEvent) {
				mu.Lock()
				events = append(events, ev)
				mu.Unlock()
			}}, app.handler())
			ctx := t.Context()
			if origin != "" {
				ctx = WithOrigin(ctx, origin)
			}
			if _, err := hs.c.Call(ctx, wire.Call{ToolID: "a.read"}); err != nil {
				t.Fatal(err)
			}
			if _, err := hs.c.Call(ctx, wire.Call{ToolID: "c.critical"}); err == nil {
				t.Fatal("a critical call above the grant was not refused")
			}
			mu.Lock()
			defer mu.Unlock()
			kinds := map[wire.TrafficKind]bool{}
			for _, ev := range events {
				if ev.Type != wire.TypeCall && ev.Type != wire.TypeResult {
					continue
				}
				kinds[ev.Kind] = true
				if ev.Origin != origin {
					t.Errorf("%s %s: origin %q, want %q", ev.Kind, ev.Type, ev.Origin, origin)
				}
			}
			if !kinds[wire.TrafficRequest] || !kinds[wire.TrafficResponse] || !kinds[wire.TrafficDenied] {
				t.Errorf("events %v", kinds)
			}
		})
	}
}
