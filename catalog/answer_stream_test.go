package catalog

import (
	"bytes"
	"testing"
	"time"

	"github.com/ansight-go/ansight/wire"
)

// Answers that list the first visible tools are made from the projection's stream, and
// decode to what Answer answers whatever the limit, the projection and the state; the
// stream is compressed once, and the payloads of two limits share its compressed bytes.
func TestAnswerPayloadStream(t *testing.T) {
	defs := bigDefs(1200)
	defs[3].Policy = wire.PolicyCritical // not visible under GuardReadWrite
	s := mustSet(t, defs, GuardReadWrite)
	noExec := mustSet(t, defs, Guard{DiscoveryEnabled: true, MaxPolicy: wire.PolicyWrite})
	down := map[string]wire.Runtime{"bench.tool_0007": {Code: "busy"}}
	for _, detail := range []string{"index", "definitions", "full"} {
		for _, limit := range []int{0, 1000, 999, 700, 40, 30, 2, 1} {
			for _, st := range []map[string]wire.Runtime{nil, down} {
				for _, set := range []*Set{s, noExec} {
					q := wire.Query{Detail: detail, Limit: limit}
					checkPayload(t, set, &q, st, testNow.Add(time.Duration(limit)))
				}
			}
		}
		// Filters do not take the stream, and still answer right.
		for _, q := range []wire.Query{{Detail: detail, Query: "tool", Limit: 900}, {Detail: detail, IDs: []string{"bench.tool_0001"}},
			{Detail: detail, Policy: "read", Limit: 800}, {Detail: detail, ExecutableOnly: true}} {
			checkPayload(t, s, &q, down, testNow)
		}
	}
	for i := range s.streams {
		if bs := s.streams[i].built; bs == nil || len(bs.cuts) < 10 || bs.tools[len(bs.tools)-1] != wire.MaxQueryLimit {
			t.Fatalf("projection %d: no stream, or cuts %v", i, bs)
		}
	}
	// The index's stream is for the availability last asked for; asked in another, it is
	// made again.
	if a := s.streams[0].avail; a == nil || a.revision != s.availabilityOf(down).revision {
		t.Error("the index's stream is not the last state's")
	}
	if noExec.streams[0].built == nil {
		t.Error("no stream for an index whose entries all say executable:false")
	}
	a, _ := s.AnswerPayload(&wire.Query{Detail: "definitions", Limit: 1000}, nil, testNow)
	b, _ := s.AnswerPayload(&wire.Query{Detail: "definitions", Limit: 990}, nil, testNow)
	data := func(p []byte) []byte { return p[bytes.Index(p, []byte(`"data":"`)):] } // past the sizes
	if n := commonPrefix(data(a), data(b)); n < len(a)*9/10 {
		t.Errorf("two limits' payloads share %d of %d bytes", n, len(a))
	}
}

func commonPrefix(a, b []byte) int {
	n := 0
	for n < min(len(a), len(b)) && a[n] == b[n] {
		n++
	}
	return n
}

// FuzzAnswerPayloadStream holds the answers made from a stream against Answer: any limit,
// projection and availability, a catalog of any size.
func FuzzAnswerPayloadStream(f *testing.F) {
	sets := map[int]*Set{}
	f.Add(uint16(1000), uint8(1), uint16(1100), false)
	f.Add(uint16(35), uint8(0), uint16(80), true)
	f.Add(uint16(0), uint8(2), uint16(3), false)
	f.Fuzz(func(t *testing.T, limit uint16, detail uint8, tools uint16, unavailable bool) {
		n := int(tools) % 1500
		s := sets[n]
		if s == nil {
			s = mustSet(t, bigDefs(n), GuardReadWrite)
			sets[n] = s
		}
		var st map[string]wire.Runtime
		if unavailable {
			st = map[string]wire.Runtime{"bench.tool_0002": {Code: "x"}}
		}
		q := wire.Query{Detail: []string{"index", "definitions", "full"}[detail%3], Limit: int(limit) % 1200}
		got := checkPayload(t, s, &q, st, testNow.Add(time.Duration(limit)))
		if len(got) > wire.CompressionThreshold && !bytes.HasPrefix(got, []byte(`{"$ansightEncoding"`)) {
			t.Fatalf("an answer of %d bytes not compressed", len(got))
		}
	})
}
