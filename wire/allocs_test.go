package wire

import (
	"fmt"
	"reflect"
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
	callPayload := jsontext.Value(`{"toolId":"app.echo","arguments":{"text":"hello"},"callId":"c1"}`)
	var decoded Result
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
		{"DecodeEnvelopeInto", 2, func() { // the envelope's strings, the arguments' copy
			var c Call
			if _, decoded, err := DecodeEnvelopeInto(data, &c, nil); err != nil || !decoded {
				t.Fatal(decoded, err)
			}
		}},
		{"UnmarshalCall", 1, func() { // the arguments' copy
			if _, err := UnmarshalCall(callPayload); err != nil {
				t.Fatal(err)
			}
		}},
		{"UnmarshalResultPayload", 0, func() { // the result shares the payload's bytes
			if _, err := UnmarshalResultPayload(result, 0, &decoded); err != nil {
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

// catalogAnswer is an index-and-definitions answer of n tools as an SDK writes it.
func catalogAnswer(n int) []byte {
	b := []byte(`{"schema":"ansight.tool-catalog.v3","revision":"sha256:0f","tools":[`)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"id":"bench.tool_%04d","name":"Tool \u00e9 %d","description":"Does thing %d.","category":"c%d","policy":"read",`+
			`"argumentsSchema":{"type":"object","properties":{"value":{"type":"string","maxLength":100}}},"resultSchema":{"type":"object"},`+
			`"keywords":"a b","prerequisiteToolIds":["bench.tool_0000"],"definitionRevision":"sha256:%x"}`, i, i, i, i%7, i)
	}
	return fmt.Appendf(b, `],"count":%d,"availabilityRevision":"sha256:1","evaluatedAtUtc":"2026-12-01T15:03:04.5Z","totalCount":%d,"categories":{"c0":1}}`, n, n)
}

// TestCatalogAllocations pins the cost of decoding a large catalog: one allocation for
// all its strings, one for all its schemas, the entries and their prerequisite lists —
// not one per value — and the same catalog the json package decodes.
func TestCatalogAllocations(t *testing.T) {
	data := catalogAnswer(500)
	var fast, generic Catalog
	if err := fastDecode(data, &fast); err != nil {
		t.Fatalf("the common form took the slow path: %v", err)
	}
	if err := scanStrict(data, catalogShape); err != nil {
		t.Fatal(err)
	}
	if err := decodeChecked(data, &generic); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fast, generic) {
		t.Fatal("the fast path decodes another catalog")
	}
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	got := testing.AllocsPerRun(20, func() {
		var c Catalog
		if err := Unmarshal(data, &c); err != nil {
			t.Fatal(err)
		}
	})
	if budget := 500.0 + 40; got > budget { // a prerequisite list per entry
		t.Errorf("catalog of 500 tools: %.0f allocations, budget %.0f", got, budget)
	} else {
		t.Logf("catalog of 500 tools: %.0f allocations", got)
	}
}
