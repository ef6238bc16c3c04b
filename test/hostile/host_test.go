package hostile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/session"
)

// hostCase is one hostile exchange with the host. closes marks the cases in which the host
// rightly ends the connection.
type hostCase struct {
	name   string
	run    func(t *testing.T, h *testHost, e *evilApp)
	closes bool
}

// forge writes a response of type typ to request replyTo with a raw payload.
func forge(t *testing.T, e *evilApp, typ, replyTo, payload string) {
	t.Helper()
	e.send(t, transport.MessageText, []byte(`{"type":"`+typ+`","id":"forged.response","replyTo":"`+replyTo+`","payload":`+payload+`}`))
}

// wantProtocolError runs a held call, answers it with raw instead of the genuine result, and
// checks that the caller gets a transport error with ErrProtocol.
func wantProtocolError(raw func(id string) string) func(t *testing.T, h *testHost, e *evilApp) {
	return func(t *testing.T, h *testHost, e *evilApp) {
		id, wait := e.holdCall(t)
		e.send(t, transport.MessageText, []byte(raw(id)))
		_, err := wait()
		if te, ok := errors.AsType[*tools.TransportError](err); !ok || !errors.Is(te, tools.ErrProtocol) {
			t.Fatalf("error %v, want a transport error for a protocol violation", err)
		}
		e.release() // the genuine result now answers nothing and is dropped
		waitStats(t, e.sess, "the late genuine result", func(s tools.Stats) bool { return s.UnmatchedResponses >= 1 })
	}
}

// unmatched sends msg and checks that the host dropped it as a response to nothing.
func unmatched(msg string) func(t *testing.T, h *testHost, e *evilApp) {
	return func(t *testing.T, h *testHost, e *evilApp) {
		e.send(t, transport.MessageText, []byte(msg))
		waitStats(t, e.sess, "dropped as unmatched", func(s tools.Stats) bool { return s.UnmatchedResponses == 1 })
	}
}

// dropsText sends msg and checks, with a control probe, that nothing answers it.
func dropsText(msg string) func(t *testing.T, h *testHost, e *evilApp) {
	return func(t *testing.T, h *testHost, e *evilApp) {
		if r := e.sendControl(t, msg, "none"); r != nil {
			t.Fatalf("the host answered %+v", r)
		}
	}
}

// controlAnswered sends a control request with id "hostile" and checks the host answers
// it, explicitly successful or not as want says.
func controlAnswered(raw string, want bool) func(t *testing.T, h *testHost, e *evilApp) {
	return func(t *testing.T, h *testHost, e *evilApp) {
		r := e.sendControl(t, raw, "hostile")
		if r == nil {
			t.Fatal("the host did not answer the control request")
		}
		if r.Success != want || r.Type != session.TypeControlResponse {
			t.Fatalf("answer %+v, want success=%v", r, want)
		}
		if !want && r.Message == "" {
			t.Error("a refusal without a message")
		}
	}
}

func ctlReq(action, payload string) string {
	return `{"type":"CONTROL_REQ","id":"hostile","action":"` + action + `","payload":` + payload + `}`
}

// frame builds an ASFT frame; frameBytes builds one with arbitrary header fields.
func frame(typ wire.FrameType, id string, seq int32, off int64, payload string) []byte {
	return asftFrame(wire.Frame{Type: typ, TransferID: id, Sequence: seq, Offset: off, Payload: []byte(payload)})
}

// transferFails announces a transfer of size bytes with id, sends frames, and checks that
// the transfer fails, the call keeps its answer, and no file is left behind.
func transferFails(id string, size int64, name string, frames func(id string) [][]byte) func(t *testing.T, h *testHost, e *evilApp) {
	return func(t *testing.T, h *testHost, e *evilApp) {
		res := announce(t, h, e, id, size, name, frames)
		if len(res.Artifacts) != 1 || res.Artifacts[0].Err == nil || res.Artifacts[0].Path != "" {
			t.Fatalf("artifacts %+v, want one failed transfer", res.Artifacts)
		}
		noFiles(t, h)
	}
}

// announce calls e.file, waits for the host to register the transfer (when the id is
// valid), writes the frames and returns the call's result.
func announce(t *testing.T, h *testHost, e *evilApp, id string, size int64, name string, frames func(id string) [][]byte) *tools.CallResult {
	t.Helper()
	type result struct {
		res *tools.CallResult
		err error
	}
	ch := make(chan result, 1)
	go func() {
		r, err := e.sess.Tools().Call(bgCtx(), wire.Call{ToolID: "e.file",
			Arguments: jsontext.Value(fmt.Sprintf(`{"id":%q,"size":%d,"name":%q}`, id, size, name))})
		ch <- result{r, err}
	}()
	if frames != nil {
		h.awaitReceiving(t, id)
	}
	if frames != nil {
		for _, f := range frames(id) {
			e.send(t, transport.MessageBinary, f)
		}
	}
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("e.file: %v", r.err)
		}
		return r.res
	case <-t.Context().Done():
		t.Fatal("stuck caller")
		return nil
	}
}

func noFiles(t *testing.T, h *testHost) {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(h.artifacts, "*", "*"))
	if len(matches) != 0 {
		t.Errorf("files left in the artifact directory: %q", matches)
	}
}

var transferSeq int

// newTransferID returns a fresh valid transfer id.
func newTransferID() string {
	transferSeq++
	return fmt.Sprintf("%032x", 0xa5a5000+transferSeq)
}

var hostCases = []hostCase{
	// Responses to requests never sent, forged and duplicated.
	{name: "ResultNeverRequested", run: unmatched(`{"type":"tool.result","id":"x.response","replyTo":"never-sent","payload":{"toolId":"e.echo","success":true,"result":{}}}`)},
	{name: "ErrorNeverRequested", run: unmatched(`{"type":"tool.error","id":"x.response","replyTo":"never-sent","payload":{"code":"tool_not_found","message":"no","retryable":false}}`)},
	{name: "CatalogNeverRequested", run: unmatched(`{"type":"tool.catalog","id":"x.response","replyTo":"never-sent","payload":{"schema":"ansight.tool-catalog.v3","revision":"sha256:00","tools":[]}}`)},
	{name: "ResultWithoutReplyTo", run: unmatched(`{"type":"tool.result","id":"x.response","payload":{"toolId":"e.echo","success":true,"result":{}}}`)},
	{name: "DuplicateResponse", run: func(t *testing.T, h *testHost, e *evilApp) {
		id, wait := e.holdCall(t)
		forge(t, e, wire.TypeResult, id, `{"toolId":"e.hold","success":true,"result":{"nonce":"first"}}`)
		res, err := wait()
		if err != nil || !strings.Contains(string(res.Payload.Result), "first") {
			t.Fatalf("the first response did not answer the call: %v %v", res, err)
		}
		e.release()
		waitStats(t, e.sess, "the second response was not dropped", func(s tools.Stats) bool { return s.UnmatchedResponses == 1 })
	}},
	{name: "ForgedReplyToOtherSession", run: func(t *testing.T, h *testHost, e *evilApp) {
		other := connectEvil(t, h, "dev.ansight.hostile.other")
		id, wait := other.holdCall(t)
		// The victim's request id is known to the attacker (say, sniffed); its forged
		// answer arrives on the attacker's own session and must not cross over.
		forge(t, e, wire.TypeResult, id, `{"toolId":"e.hold","success":true,"result":{"nonce":"forged"}}`)
		waitStats(t, e.sess, "the forged response was not dropped", func(s tools.Stats) bool { return s.UnmatchedResponses == 1 })
		other.release()
		res, err := wait()
		if err != nil || !strings.Contains(string(res.Payload.Result), "genuine") {
			t.Fatalf("the other session's call got %v %v, want its genuine result", res, err)
		}
	}},
	{name: "WrongResponseType", run: wantProtocolError(func(id string) string {
		return `{"type":"tool.catalog","id":"f.response","replyTo":"` + id + `","payload":{"schema":"ansight.tool-catalog.v3","revision":"sha256:00","tools":[]}}`
	})},
	{name: "ResponseDuplicateKey", run: wantProtocolError(func(id string) string {
		return `{"type":"tool.result","id":"f.response","replyTo":"` + id + `","payload":{"toolId":"e.hold","success":true,"success":false,"result":{}}}`
	})},
	{name: "ResponseCaseVariantKey", run: wantProtocolError(func(id string) string {
		return `{"type":"tool.result","id":"f.response","replyTo":"` + id + `","payload":{"toolId":"e.hold","Success":false,"success":true,"result":{}}}`
	})},
	{name: "ResponseSuccessString", run: wantProtocolError(func(id string) string {
		return `{"type":"tool.result","id":"f.response","replyTo":"` + id + `","payload":{"toolId":"e.hold","success":"true","result":{}}}`
	})},
	{name: "ResponsePayloadNotObject", run: wantProtocolError(func(id string) string {
		return `{"type":"tool.result","id":"f.response","replyTo":"` + id + `","payload":"done"}`
	})},
	{name: "ResponseDeepNesting", run: wantProtocolError(func(id string) string {
		return `{"type":"tool.result","id":"f.response","replyTo":"` + id + `","payload":{"toolId":"e.hold","success":true,"result":` + nested(10000, "0") + `}}`
	})},
	{name: "ResponseDecompressionBomb", run: wantProtocolError(func(id string) string {
		return `{"type":"tool.result","id":"f.response","replyTo":"` + id + `","payload":` + bomb(8, 100) + `}`
	})},
	{name: "ErrorPayloadWrongTypes", run: wantProtocolError(func(id string) string {
		return `{"type":"tool.error","id":"f.response","replyTo":"` + id + `","payload":{"code":7,"message":["no"],"retryable":"maybe"}}`
	})},

	// ASFT frames.
	{name: "ASFTUnknownTransfer", run: func(t *testing.T, h *testHost, e *evilApp) {
		e.send(t, transport.MessageBinary, frame(wire.FrameChunk, newTransferID(), 0, 0, "stray"))
		waitStats(t, e.sess, "the stray frame was not rejected", func(s tools.Stats) bool { return s.RejectedFrames == 1 })
	}},
	// Binary messages that are not ASFT (other SDKs stream ASJP screenshots) are ignored.
	{name: "BinaryOtherMagic", run: func(t *testing.T, h *testHost, e *evilApp) {
		f := frame(wire.FrameChunk, newTransferID(), 0, 0, "x")
		copy(f, "EVIL")
		e.send(t, transport.MessageBinary, f)
	}},
	{name: "ASFTTruncatedHeader", run: func(t *testing.T, h *testHost, e *evilApp) {
		e.send(t, transport.MessageBinary, frame(wire.FrameChunk, newTransferID(), 0, 0, "x")[:30])
		waitStats(t, e.sess, "the short frame was not rejected", func(s tools.Stats) bool { return s.RejectedFrames == 1 })
	}},
	{name: "ASFTGap", run: transferFails(newTransferID(), 20, "gap.bin", func(id string) [][]byte {
		return [][]byte{frame(wire.FrameChunk, id, 0, 0, "0123456789"), frame(wire.FrameChunk, id, 1, 15, "01234")}
	})},
	{name: "ASFTOverlap", run: transferFails(newTransferID(), 20, "overlap.bin", func(id string) [][]byte {
		return [][]byte{frame(wire.FrameChunk, id, 0, 0, "0123456789"), frame(wire.FrameChunk, id, 1, 5, "0123456789")}
	})},
	{name: "ASFTSequenceSkip", run: transferFails(newTransferID(), 20, "seq.bin", func(id string) [][]byte {
		return [][]byte{frame(wire.FrameChunk, id, 0, 0, "0123456789"), frame(wire.FrameChunk, id, 2, 10, "0123456789")}
	})},
	{name: "ASFTMoreThanAnnounced", run: transferFails(newTransferID(), 5, "big.bin", func(id string) [][]byte {
		return [][]byte{frame(wire.FrameChunk, id, 0, 0, "0123456789")}
	})},
	{name: "ASFTCompleteEarly", run: transferFails(newTransferID(), 20, "short.bin", func(id string) [][]byte {
		return [][]byte{frame(wire.FrameChunk, id, 0, 0, "0123456789"), frame(wire.FrameComplete, id, 1, 10, "")}
	})},
	{name: "ASFTCompleteWithPayload", run: transferFails(newTransferID(), 10, "tail.bin", func(id string) [][]byte {
		// The encoder refuses to write this frame: patch a chunk's type byte instead.
		bad := frame(wire.FrameChunk, id, 1, 10, "extra")
		bad[5] = byte(wire.FrameComplete)
		return [][]byte{frame(wire.FrameChunk, id, 0, 0, "0123456789"), bad}
	})},
	{name: "ASFTLengthMismatch", run: transferFails(newTransferID(), 10, "len.bin", func(id string) [][]byte {
		f := frame(wire.FrameChunk, id, 0, 0, "0123456789")
		binary.LittleEndian.PutUint32(f[52:], 9999) // header payload length disagrees
		// The bad frame is rejected; the transfer then stalls without a valid frame and is
		// ended by the app's error frame.
		return [][]byte{f, frame(wire.FrameError, id, 0, 0, "gave up")}
	})},
	{name: "ASFTErrorFrame", run: transferFails(newTransferID(), 20, "err.bin", func(id string) [][]byte {
		return [][]byte{frame(wire.FrameChunk, id, 0, 0, "0123456789"), frame(wire.FrameError, id, 1, 10, "camera unplugged")}
	})},
	{name: "ASFTDescriptorBadID", run: transferFails("../../../../etc/passwd", 10, "x.bin", nil)},
	{name: "ASFTDescriptorNegativeSize", run: transferFails(newTransferID(), -5, "neg.bin", nil)},
	{name: "ASFTTraversalFileName", run: func(t *testing.T, h *testHost, e *evilApp) {
		res := announce(t, h, e, newTransferID(), 4, "../../../escape.bin", func(id string) [][]byte {
			return [][]byte{frame(wire.FrameChunk, id, 0, 0, "evil"), frame(wire.FrameComplete, id, 1, 4, "")}
		})
		if len(res.Artifacts) != 1 || res.Artifacts[0].Err != nil {
			t.Fatalf("artifacts %+v", res.Artifacts)
		}
		rel, err := filepath.Rel(h.artifacts, res.Artifacts[0].Path)
		if err != nil || strings.HasPrefix(rel, "..") || strings.Count(rel, string(filepath.Separator)) != 1 {
			t.Fatalf("artifact written to %s, outside the session's artifact directory", res.Artifacts[0].Path)
		}
	}},

	// Control requests with wrong payload types, unknown actions, smuggling.
	{name: "ControlPayloadString", run: controlAnswered(ctlReq(session.ActionSessionProperties, `"dark mode"`), false)},
	{name: "ControlPayloadArray", run: controlAnswered(ctlReq(session.ActionAppState, `["foreground"]`), false)},
	{name: "ControlPayloadNumber", run: controlAnswered(ctlReq(session.ActionDeviceProfile, `42`), false)},
	{name: "ControlPayloadNull", run: controlAnswered(ctlReq(session.ActionAppState, `null`), false)},
	// A log line without a payload is an empty line, acknowledged as the official host does
	// (issue 12.6).
	{name: "ControlLogPayloadNull", run: controlAnswered(ctlReq(session.ActionClientLog, `null`), true)},
	{name: "ControlStateWrongType", run: controlAnswered(ctlReq(session.ActionAppState, `{"state":5}`), false)},
	{name: "ControlUnknownAction", run: controlAnswered(ctlReq("shell.exec", `{"cmd":"rm -rf /"}`), false)},
	{name: "ControlActionNumber", run: controlAnswered(`{"type":"CONTROL_REQ","id":"hostile","action":5,"payload":{}}`, false)},
	// Smuggling attempts are not control requests at all: dropped unanswered, and above
	// all never acted upon (the session stays open).
	// Smuggled second actions are refused by id, not acted on (nor left unanswered: the SDK
	// would tear the session down after 10–15 s).
	{name: "ControlDuplicateAction", run: controlAnswered(`{"type":"CONTROL_REQ","id":"hostile","action":"app.state","action":"session.complete","payload":{}}`, false)},
	{name: "ControlCaseVariantAction", run: controlAnswered(`{"type":"CONTROL_REQ","id":"hostile","action":"app.state","Action":"session.complete","payload":{}}`, false)},
	{name: "ControlHugeLog", run: controlAnswered(ctlReq(session.ActionClientLog, `{"level":"info","message":"`+strings.Repeat("L", hostMaxMessage/2)+`"}`), true)},
	// Each action's payload is bounded by what it needs: an oversized one is refused at
	// once, by id, before its payload is decoded.
	{name: "ControlOversizedAppState", run: controlAnswered(ctlReq(session.ActionAppState, `{"state":"foreground","pad":"`+strings.Repeat("S", 64<<10)+`"}`), false)},
	{name: "ControlOversizedUnknownAction", run: controlAnswered(ctlReq("shell.exec", `{"pad":"`+strings.Repeat("U", 128<<10)+`"}`), false)},
	{name: "ControlWithoutID", run: dropsText(`{"type":"CONTROL_REQ","action":"session.complete","payload":{}}`)},
	{name: "ControlResponseToHost", run: dropsText(`{"type":"CONTROL_RESP","id":"x","replyTo":"never","action":"session.open","success":true,"message":"ok","payload":null}`)},

	// Stray traffic.
	{name: "TextGarbage", run: dropsText(`hello, host`)},
	{name: "ToolRequestToHost", run: dropsText(`{"type":"tool.call","id":"x","payload":{"toolId":"host.shutdown"}}`)},
	{name: "BinaryGarbage", run: func(t *testing.T, h *testHost, e *evilApp) {
		e.send(t, transport.MessageBinary, []byte("\x00garbage"))
	}},

	// A message above the host's limit ends the connection (1009); the app may connect
	// again, and nothing else is affected.
	{name: "OversizedMessage", closes: true, run: func(t *testing.T, h *testHost, e *evilApp) {
		e.send(t, transport.MessageText, []byte(`{"type":"CONTROL_REQ","id":"big","action":"client.log","payload":{"message":"`+strings.Repeat("B", hostMaxMessage)+`"}}`))
		select {
		case <-e.served:
		case <-t.Context().Done():
			t.Fatal("the host kept a connection that sent an oversized message")
		}
		again := connectEvil(t, h, e.id.appID)
		again.alive(t)
	}},
}

// TestHostileToHost runs every host case on a fresh malicious session, then proves that the
// session still works (unless the case ends it) and that a bystander app's session does.
func TestHostileToHost(t *testing.T) {
	h := newTestHost(t, nil)
	bystander := connectEvil(t, h, "dev.ansight.bystander")
	for i, tc := range hostCases {
		t.Run(tc.name, func(t *testing.T) {
			e := connectEvil(t, h, fmt.Sprintf("dev.ansight.hostile%02d", i))
			tc.run(t, h, e)
			if !tc.closes {
				e.alive(t)
				if e.sess.State() != host.StateConnected {
					t.Fatal("the session was disconnected")
				}
			}
			bystander.alive(t)
			noFilesExcept(t, h)
		})
	}
}

// noFilesExcept checks no partial files are left: every file in the artifact directory is
// a complete artifact (only the traversal case completes one, of 4 bytes).
func noFilesExcept(t *testing.T, h *testHost) {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(h.artifacts, "*", "*"))
	for _, m := range matches {
		if filepath.Base(m) != "escape.bin" {
			t.Errorf("file left in the artifact directory: %s", m)
		}
	}
}

// TestLargeControlRequest: a 20 MiB client.log, under the host's 64 MiB message limit but
// far above what a log line needs, is answered success:false by id (the SDK tears down a
// session whose control request goes unanswered for 15 s), and the session stays usable.
func TestLargeControlRequest(t *testing.T) {
	h := newTestHost(t, func(o *host.Options) { o.MaxMessageBytes = 0 }) // the default limit
	e := connectEvil(t, h, "dev.ansight.biglog")
	big := ctlReq(session.ActionClientLog, `{"data":"`+strings.Repeat("L", 20<<20)+`"}`)
	r := e.sendControl(t, big, "hostile")
	if r == nil || r.Success || r.Message == "" {
		t.Fatalf("a 20 MiB client.log got %+v, want a refusal with a message", r)
	}
	e.alive(t)
}
