package conformance

import (
	"testing"

	"github.com/ansight-go/ansight/wire"
)

// FuzzResponse feeds arbitrary text messages to everything the suite does with a
// response: it reads apps that may be hostile or broken, so nothing may panic.
func FuzzResponse(f *testing.F) {
	for _, s := range []string{
		`{"type":"tool.catalog","id":"r.response","replyTo":"r","sessionId":"s","sentAt":"2026-01-02T03:04:05Z","capability":"tool.exec","payload":{"schema":"ansight.tool-catalog.v3","revision":"sha256:a","tools":[{"id":"a.b","name":"A","description":"d","category":"c","policy":"read","definitionRevision":"sha256:b","runtime":{"available":false,"code":"x","retryable":true},"executable":false,"argumentsSchema":{"type":"object","additionalProperties":false}}],"count":1,"availabilityRevision":"sha256:c","evaluatedAtUtc":"2026-01-02T03:04:05+00:00","totalCount":1,"categories":{"c":1}}}`,
		`{"type":"tool.catalog","id":"r.response","replyTo":"r","payload":{"schema":"ansight.tool-catalog.v3","revision":"x","unchanged":true,"availabilityRevision":"y","evaluatedAtUtc":"2026-01-02T03:04:05Z","changes":{"a":{"available":false},"b":[]}}}`,
		`{"type":"tool.result","id":"r.response","replyTo":"r","payload":{"toolId":"t","success":true,"result":{"deliveryMode":"websocket_binary","wireProtocol":"ansight.file-transfer.v1","transferId":"0123456789abcdef0123456789abcdef","sizeBytes":10},"evidence":{"visualTree":{"success":false,"error":7}}}}`,
		`{"type":"tool.batch.result","id":"r.response","replyTo":null,"sessionId":null,"payload":{"success":false,"results":[5,{"index":"x","success":false,"error":{"code":"A B"}}]}}`,
		`{"type":"tool.error","id":"tool.error.1","payload":{"$ansightEncoding":"gzip-base64-json","contentType":"application/json","originalByteCount":5,"compressedByteCount":1,"data":"H4sIAAAAAAAA/6quBQQAAP//Q7+myAIAAAA="}}`,
		`{"type":"tool.error","id":"e","payload":{"$ansightEncoding":"gzip-base64-json","data":"!!"}}`,
		`{"type":"tool.result","id":"a","id":"b"}`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newRun(nil, Options{})
		r.sent["r"] = &sent{id: "r", typ: wire.TypeQuery, sessionID: "s"}
		p := r.parse(data)
		r.announce(p)
		envelopeProblems(p, r.sent["r"])
		envelopeProblems(p, nil)
		if p.env != nil && len(p.env.Payload) > 0 {
			if p.wrapped {
				wrapperProblems(p.env.Payload)
			} else {
				plainProblems(p.env.Payload)
			}
		}
		o := p.obj()
		if o == nil {
			return
		}
		for _, d := range []string{wire.DetailIndex, wire.DetailDefinitions, wire.DetailFull} {
			catalogProblems(o, d)
		}
		defaultProblems(o, "x")
		v := readCatalog(o)
		for _, tv := range v.tools {
			tv.searchable()
			closedSchema(tv)
			required(tv.args)
		}
		unavailable(o)
		resultProblems(o, "t")
		outcomeProblems(o, "o")
		errorShape(o, "")
		if ch, ok := o["changes"].(map[string]any); ok {
			for _, x := range ch {
				if rt, ok := x.(map[string]any); ok {
					runtimeProblems(rt, "c")
					sameRuntime(rt, rt)
				}
			}
		}
	})
}

// FuzzFrames feeds arbitrary binary messages to the ASFT follower of an announced
// transfer.
func FuzzFrames(f *testing.F) {
	const id = "0123456789abcdef0123456789abcdef"
	chunk, _ := wire.AppendFrame(nil, wire.Frame{Type: wire.FrameChunk, TransferID: id, Payload: []byte("hello")})
	done, _ := wire.AppendFrame(nil, wire.Frame{Type: wire.FrameComplete, TransferID: id, Sequence: 1, Offset: 5})
	fail, _ := wire.AppendFrame(nil, wire.Frame{Type: wire.FrameError, TransferID: id, Payload: []byte("disk full")})
	f.Add(chunk, done)
	f.Add(fail, chunk)
	f.Add(done, []byte("ASFT"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		r := newRun(nil, Options{})
		r.frame(a) // before the announcement
		r.announce(&response{val: map[string]any{"deliveryMode": wire.DeliveryModeWebSocketBinary, "wireProtocol": wire.FileTransferProtocol, "transferId": id, "sizeBytes": 5.0}})
		r.frame(b)
		r.frame(a)
		if tr := r.transfers[id]; tr.frames > 3 {
			t.Fatalf("%d frames followed, 3 at most were sent", tr.frames)
		}
	})
}
