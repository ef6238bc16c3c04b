package apptest

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/internal/transcript"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// Harness sends requests to an app and decodes its answers. Its methods fail the test on
// anything that is not a well-formed answer to the request.
type Harness struct {
	t   testing.TB
	app *app.App
	n   int
}

// New returns a harness for a.
func New(t testing.TB, a *app.App) *Harness { return &Harness{t: t, app: a} }

// App is the app under test.
func (h *Harness) App() *app.App { return h.app }

// Response is one decoded answer: exactly one of Result, Batch, Err and Catalog is set. Payload
// is the answer's payload as the app wrote it (possibly gzip-wrapped); Artifacts holds the
// bytes of every completed ASFT transfer that followed it, by transfer id; OfficialHost
// lists the transfers of the answer the official host would receive (OfficialHostTransfers).
// A tool whose artifacts must reach every host has as many of these as of Artifacts.
type Response struct {
	Result       *wire.Result
	Batch        *wire.BatchResult
	Err          *wire.Error
	Catalog      *wire.Catalog
	Payload      jsontext.Value
	Artifacts    map[string][]byte
	OfficialHost []string
}

// Send writes one request envelope of type typ with the given JSON payload and decodes the
// answer.
func (h *Harness) Send(typ string, payload string) Response {
	h.t.Helper()
	return h.SendContext(context.Background(), typ, payload)
}

// SendContext is Send with the request's context (a cancelled context cancels the tool).
func (h *Harness) SendContext(ctx context.Context, typ string, payload string) Response {
	h.t.Helper()
	h.n++
	id := fmt.Sprintf("req-%d", h.n)
	env := fmt.Sprintf(`{"type":%q,"id":%q,"capability":"tool.exec","payload":%s}`, typ, id, payload)
	var rec transcript.Recorder
	ok, err := h.app.Handle(ctx, []byte(env), &rec)
	if !ok || err != nil {
		h.t.Fatalf("Handle(%s) = %v, %v", env, ok, err)
	}
	msgs := rec.Take()
	if len(msgs) == 0 || msgs[0].Type != transport.MessageText {
		h.t.Fatalf("no text response to %s", env)
	}
	e, err := wire.DecodeEnvelope(msgs[0].Data)
	if err != nil {
		h.t.Fatalf("response envelope: %v", err)
	}
	if e.ReplyTo != id {
		h.t.Fatalf("replyTo = %q, want %q", e.ReplyTo, id)
	}
	body, err := wire.DecodePayload(e.Payload, wire.DefaultMaxInflatedBytes)
	if err != nil {
		h.t.Fatalf("response payload: %v", err)
	}
	r := Response{Payload: e.Payload}
	switch e.Type {
	case wire.TypeResult:
		r.Result = new(wire.Result)
		err = wire.Unmarshal(body, r.Result)
	case wire.TypeBatchResult:
		r.Batch = new(wire.BatchResult)
		err = wire.Unmarshal(body, r.Batch)
	case wire.TypeError:
		r.Err = new(wire.Error)
		err = wire.Unmarshal(body, r.Err)
	case wire.TypeCatalog:
		r.Catalog = new(wire.Catalog)
		err = wire.Unmarshal(body, r.Catalog)
	default:
		h.t.Fatalf("unexpected response type %q", e.Type)
	}
	if err != nil {
		h.t.Fatalf("decoding %s: %v\n%s", e.Type, err, body)
	}
	r.Artifacts = reassemble(h.t, msgs[1:])
	r.OfficialHost = OfficialHostTransfers(body)
	return r
}

// Call invokes a tool with JSON arguments and returns its result, failing the test on a
// tool error.
func (h *Harness) Call(toolID, args string) (jsontext.Value, Response) {
	h.t.Helper()
	r := h.Send(wire.TypeCall, fmt.Sprintf(`{"toolId":%q,"arguments":%s}`, toolID, args))
	if r.Err != nil {
		h.t.Fatalf("%s(%s) failed: %v %s", toolID, args, r.Err, r.Err.Details)
	}
	return r.Result.Result, r
}

// Fail invokes a tool that must fail and returns its error.
func (h *Harness) Fail(toolID, args string) *wire.Error {
	h.t.Helper()
	r := h.Send(wire.TypeCall, fmt.Sprintf(`{"toolId":%q,"arguments":%s}`, toolID, args))
	if r.Err == nil {
		h.t.Fatalf("%s(%s) succeeded: %s", toolID, args, r.Result.Result)
	}
	return r.Err
}

// reassemble checks the ASFT frames (docs/protocol/artifacts.md#receiving: contiguous sequence and offsets, one
// complete frame) and returns each completed transfer's bytes.
func reassemble(t testing.TB, msgs []transcript.Message) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	type state struct {
		seq  int32
		data []byte
	}
	open := map[string]*state{}
	for _, m := range msgs {
		if m.Type != transport.MessageBinary {
			t.Fatalf("a text message after the response: %s", m.Data)
		}
		f, err := wire.ParseFrame(m.Data)
		if err != nil {
			t.Fatalf("ASFT frame: %v", err)
		}
		st := open[f.TransferID]
		if st == nil {
			st = &state{}
			open[f.TransferID] = st
		}
		if f.Sequence != st.seq || f.Offset != int64(len(st.data)) {
			t.Fatalf("frame seq %d offset %d, want %d %d", f.Sequence, f.Offset, st.seq, len(st.data))
		}
		st.seq++
		switch f.Type {
		case wire.FrameChunk:
			st.data = append(st.data, f.Payload...)
		case wire.FrameComplete:
			out[f.TransferID] = st.data
		default:
			t.Fatalf("transfer %s failed: %s", f.TransferID, f.Payload)
		}
	}
	return out
}
