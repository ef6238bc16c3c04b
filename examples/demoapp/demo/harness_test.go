package demo

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// harness drives an app through its message entry point (App.Handle), exactly as a
// connection would, and decodes what the app writes back.
type harness struct {
	t   *testing.T
	app *app.App
	n   int
}

// recorder is an app.MessageWriter that keeps every message.
type recorder struct {
	mu   sync.Mutex
	msgs []message
}

type message struct {
	typ  transport.MessageType
	data []byte
}

func (r *recorder) Write(_ context.Context, typ transport.MessageType, data []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, message{typ, append([]byte(nil), data...)})
	return nil
}

// response is one decoded answer: exactly one of result and err is set; artifacts holds the
// bytes of every completed ASFT transfer, by transfer id.
type response struct {
	result    *wire.Result
	err       *wire.Error
	catalog   *wire.Catalog
	artifacts map[string][]byte
}

// send writes one request envelope and decodes the answer.
func (h *harness) send(typ string, payload string) response {
	h.t.Helper()
	h.n++
	id := fmt.Sprintf("req-%d", h.n)
	env := fmt.Sprintf(`{"type":%q,"id":%q,"capability":"tool.exec","payload":%s}`, typ, id, payload)
	var rec recorder
	ok, err := h.app.Handle(context.Background(), []byte(env), &rec)
	if !ok || err != nil {
		h.t.Fatalf("Handle(%s) = %v, %v", env, ok, err)
	}
	if len(rec.msgs) == 0 || rec.msgs[0].typ != transport.MessageText {
		h.t.Fatalf("no text response to %s", env)
	}
	e, err := wire.DecodeEnvelope(rec.msgs[0].data)
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
	var r response
	switch e.Type {
	case wire.TypeResult:
		r.result = new(wire.Result)
		err = wire.Unmarshal(body, r.result)
	case wire.TypeError:
		r.err = new(wire.Error)
		err = wire.Unmarshal(body, r.err)
	case wire.TypeCatalog:
		r.catalog = new(wire.Catalog)
		err = wire.Unmarshal(body, r.catalog)
	default:
		h.t.Fatalf("unexpected response type %q", e.Type)
	}
	if err != nil {
		h.t.Fatalf("decoding %s: %v\n%s", e.Type, err, body)
	}
	r.artifacts = reassemble(h.t, rec.msgs[1:])
	return r
}

// call invokes a tool and returns its result, failing the test on a tool error.
func (h *harness) call(toolID, args string) (jsontext.Value, response) {
	h.t.Helper()
	r := h.send(wire.TypeCall, fmt.Sprintf(`{"toolId":%q,"arguments":%s}`, toolID, args))
	if r.err != nil {
		h.t.Fatalf("%s(%s) failed: %v %s", toolID, args, r.err, r.err.Details)
	}
	return r.result.Result, r
}

// fail invokes a tool that must fail and returns the error.
func (h *harness) fail(toolID, args string) *wire.Error {
	h.t.Helper()
	r := h.send(wire.TypeCall, fmt.Sprintf(`{"toolId":%q,"arguments":%s}`, toolID, args))
	if r.err == nil {
		h.t.Fatalf("%s(%s) succeeded: %s", toolID, args, r.result.Result)
	}
	return r.err
}

// reassemble checks the ASFT frames (spec §9) and returns each completed transfer's bytes.
func reassemble(t *testing.T, msgs []message) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	type state struct {
		seq  int32
		data []byte
	}
	open := map[string]*state{}
	for _, m := range msgs {
		b := m.data
		if m.typ != transport.MessageBinary || len(b) < 56 || string(b[:4]) != "ASFT" || b[4] != 1 {
			t.Fatalf("not an ASFT frame: % x", b[:min(len(b), 16)])
		}
		id := string(b[8:40])
		seq := int32(binary.LittleEndian.Uint32(b[40:44]))
		off := int64(binary.LittleEndian.Uint64(b[44:52]))
		n := int(binary.LittleEndian.Uint32(b[52:56]))
		if n != len(b)-56 {
			t.Fatalf("frame payload length %d, message carries %d", n, len(b)-56)
		}
		st := open[id]
		if st == nil {
			st = &state{}
			open[id] = st
		}
		if seq != st.seq || off != int64(len(st.data)) {
			t.Fatalf("frame seq %d offset %d, want %d %d", seq, off, st.seq, len(st.data))
		}
		st.seq++
		switch b[5] {
		case 1:
			st.data = append(st.data, b[56:]...)
		case 2:
			out[id] = st.data
		default:
			t.Fatalf("transfer %s failed: %s", id, b[56:])
		}
	}
	return out
}

// raw returns the raw payload of the answer to a request (to look at its encoding).
func (h *harness) raw(typ, payload string) []byte {
	h.t.Helper()
	h.n++
	env := fmt.Sprintf(`{"type":%q,"id":"raw-%d","payload":%s}`, typ, h.n, payload)
	var rec recorder
	if _, err := h.app.Handle(context.Background(), []byte(env), &rec); err != nil {
		h.t.Fatal(err)
	}
	e, err := wire.DecodeEnvelope(rec.msgs[0].data)
	if err != nil {
		h.t.Fatal(err)
	}
	return e.Payload
}
