package wire

import (
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// smallCall is a tool.call as the official host sends it.
const smallCall = `{"type":"tool.call","id":"call-0191","replyTo":null,"sessionId":"session_1","sentAt":"2026-08-25T00:01:00.1234567+00:00","capability":"tool.exec","payload":{"toolId":"app.echo","arguments":{"text":"hello"},"callId":"c1"}}`

// TestRoundTripAllocations pins the allocation cost of the codec's share of a small
// tool.call round trip (decode envelope and payload, encode the response), which the SDK
// budgets at 60 allocations in total. Counts, not times: deterministic.
func TestRoundTripAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	data := []byte(smallCall)
	result := jsontext.Value(`{"toolId":"app.echo","success":true,"result":{"text":"hello"}}`)
	now := time.Now()
	buf := make([]byte, 0, 1024)
	steps := []struct {
		name string
		max  float64
		f    func()
	}{
		{"DecodeEnvelope", 1, func() {
			if _, err := DecodeEnvelope(data); err != nil {
				t.Fatal(err)
			}
		}},
		{"Unmarshal Call", 3, func() {
			var c Call
			if err := Unmarshal(jsontext.Value(`{"toolId":"app.echo","arguments":{"text":"hello"},"callId":"c1"}`), &c); err != nil {
				t.Fatal(err)
			}
		}},
		{"AppendEnvelope", 1, func() {
			req := Envelope{Type: TypeCall, ID: "call-0191", SessionID: "session_1"}
			resp := Envelope{Type: TypeResult, ID: "call-0191.response", ReplyTo: req.ID, SessionID: req.SessionID, SentAt: now, Capability: CapabilityToolExec, Payload: result}
			if _, err := AppendEnvelope(buf[:0], &resp); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, s := range steps {
		if got := testing.AllocsPerRun(200, s.f); got > s.max {
			t.Errorf("%s: %.1f allocations, budget %.0f", s.name, got, s.max)
		} else {
			t.Logf("%s: %.1f allocations", s.name, got)
		}
	}
}
