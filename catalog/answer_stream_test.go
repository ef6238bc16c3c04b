package catalog

import (
	"bytes"
	"testing"
	"time"

	"pgregory.net/rapid"

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
		if bs := s.streams[i].built; bs == nil || len(bs.cuts) < 5 || bs.tools[len(bs.tools)-1] != wire.MaxQueryLimit {
			t.Fatalf("projection %d: no stream, or too few cuts", i)
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

// A Set made WithGuard answers byte for byte as a new Set of the same tools and guard,
// whatever the guards before it, the availability and the query: the stretches it copies
// from the last Set's streams are those it would have compressed (wire.NewStreamPieces).
func TestPropertyWithGuardStream(t *testing.T) {
	t.Parallel()
	// Each tool as it is and as a critical one, made once (schemas are slow to compile
	// under the race detector).
	defs := bigDefs(1100)
	var made [2][]*Tool
	for v := range made {
		for _, d := range defs {
			if v == 1 {
				d.Policy = wire.PolicyCritical
			}
			tool, err := NewTool(d)
			if err != nil {
				t.Fatal(err)
			}
			made[v] = append(made[v], tool)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		if raceEnabled && rapid.IntRange(0, 4).Draw(t, "run") > 0 {
			return // a fifth of the checks
		}
		n := rapid.IntRange(0, 200).Draw(t, "tools") // a few stretches; now and then more than a listing holds
		if rapid.IntRange(0, 19).Draw(t, "large") == 0 {
			n = 1100
		}
		tools := make([]*Tool, n)
		for i := range tools {
			tools[i] = made[0][i]
			if rapid.IntRange(0, 40).Draw(t, "critical") == 0 {
				tools[i] = made[1][i]
			}
		}
		guards := []Guard{GuardFullAccess, GuardReadWrite, {DiscoveryEnabled: true, MaxPolicy: wire.PolicyCritical}}
		s, err := NewSetOf(tools, GuardFullAccess)
		if err != nil {
			t.Fatal(err)
		}
		for step := range 3 {
			var down map[string]wire.Runtime
			if n > 0 && rapid.Bool().Draw(t, "down") {
				down = map[string]wire.Runtime{defs[rapid.IntRange(0, n-1).Draw(t, "which")].ID: {Code: "busy"}}
			}
			q := wire.Query{Detail: rapid.SampledFrom([]string{"index", "definitions", "full"}).Draw(t, "detail"),
				Limit: rapid.SampledFrom([]int{0, 1000, 999, 100, 1}).Draw(t, "limit")}
			// A new Set, or (after a guard change) a new Set's successor with nothing to
			// copy from: what a Set made from another compresses without copying.
			fresh, err := NewSetOf(tools, s.Guard())
			if err != nil {
				t.Fatal(err)
			}
			if s.changed {
				if fresh, err = fresh.WithGuard(s.Guard()); err != nil {
					t.Fatal(err)
				}
			}
			now := testNow.Add(time.Duration(step))
			got := checkPayload(t, s, &q, down, now)
			if want, _ := fresh.AnswerPayload(&q, down, now); !bytes.Equal(got, want) {
				t.Fatalf("step %d, query %+v: the payload differs from a new Set's", step, q)
			}
			if s, err = s.WithGuard(rapid.SampledFrom(guards).Draw(t, "guard")); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// A new Set compresses its stream in one piece, its successors in pieces; after a guard
// change that hides one tool, the new Set's definitions stream is the last one's
// compressed stretches but the first few: the head's, the hidden tool's and those whose
// window held it.
func TestWithGuardReusesStream(t *testing.T) {
	defs := bigDefs(1200)
	defs[500].Policy = wire.PolicyCritical
	first := mustSet(t, defs, GuardFullAccess)
	q := wire.Query{Detail: "definitions"}
	checkPayload(t, first, &q, nil, testNow)
	full, err := first.WithGuard(GuardFullAccess)
	if err != nil {
		t.Fatal(err)
	}
	checkPayload(t, full, &q, nil, testNow)
	if !full.streams[1].built.stream.Pieces() || first.streams[1].built.stream.Pieces() {
		t.Fatal("a new Set's stream in pieces, or its successor's not")
	}
	rw, err := full.WithGuard(GuardReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	if rw.streams[1].prev != full.streams[1].built {
		t.Fatal("the new Set does not hold the last one's stream")
	}
	checkPayload(t, rw, &q, nil, testNow)
	if rw.streams[1].prev != nil {
		t.Error("the last Set's stream kept after the new one was built")
	}
	a, b := full.streams[1].built, rw.streams[1].built
	copied := 0
	hints := b.reuse(a)
	for i, k := range hints {
		if k >= 0 {
			copied++
			if b.tools[i]-b.tools[i-1] != a.tools[k]-a.tools[k-1] {
				t.Fatalf("stretch %d copied from %d, of another length", i, k)
			}
		}
	}
	if copied < len(hints)-3 {
		t.Errorf("%d of %d stretches copied", copied, len(hints))
	}
}
