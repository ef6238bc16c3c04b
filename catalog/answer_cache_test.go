package catalog

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ansight-go/ansight/wire"
)

// checkPayload compares AnswerPayload with Answer, the plain path it must agree with.
func checkPayload(t interface {
	Helper()
	Fatalf(string, ...any)
}, s *Set, q *wire.Query, down map[string]wire.Runtime, now time.Time) []byte {
	t.Helper()
	want, werr := s.Answer(q, down, now)
	got, gerr := s.AnswerPayload(q, down, now)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("Answer: %v; AnswerPayload: %v", werr, gerr)
	}
	if werr != nil {
		if wire.CodeOf(werr) != wire.CodeOf(gerr) {
			t.Fatalf("Answer: %v; AnswerPayload: %v", werr, gerr)
		}
		return nil
	}
	dec, err := wire.DecodePayload(got, 0)
	if err != nil {
		t.Fatalf("AnswerPayload gave an undecodable payload: %v", err)
	}
	if !bytes.Equal(dec, want) {
		t.Fatalf("query %+v:\nAnswerPayload %s\nAnswer        %s", q, dec, want)
	}
	return got
}

// Whatever the query, the availability and the time, and however often it is asked,
// AnswerPayload decodes to what Answer answers.
func TestPropertyAnswerPayload(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		defs := genDefs(t)
		s, err := NewSet(defs, genGuard().Draw(t, "guard"))
		if err != nil {
			t.Skip(err)
		}
		states := []map[string]wire.Runtime{nil, genDown(t, defs), genDown(t, defs)}
		for i := range rapid.IntRange(1, 30).Draw(t, "queries") {
			q := genQuery(t, s)
			checkPayload(t, s, &q, states[rapid.IntRange(0, 2).Draw(t, "state")], testNow.Add(time.Duration(i)*time.Millisecond))
		}
	})
}

// bigDefs is a catalog whose answers are compressed.
func bigDefs(n int) []Definition {
	defs := make([]Definition, n)
	for i := range defs {
		defs[i] = def(fmt.Sprintf("bench.tool_%04d", i), wire.PolicyRead, []string{"a", "b", "c"}[i%3])
		defs[i].Description = strings.Repeat(fmt.Sprintf("Tool %d does things. ", i), 4)
	}
	return defs
}

// A large answer asked again keeps its compressed head and changes only in its stored
// tail, which is what a reader's SharedPrefix takes without inflating; another state or
// another query is a new answer.
func TestAnswerPayloadRepeated(t *testing.T) {
	s := mustSet(t, bigDefs(600), GuardReadWrite)
	down := map[string]wire.Runtime{"bench.tool_0007": {Code: "busy"}}
	for _, q := range []wire.Query{{Detail: "index"}, {Detail: "definitions"}, {}, {Detail: "full", Query: "tool", Limit: 400}} {
		first := checkPayload(t, s, &q, down, testNow)
		if !bytes.HasPrefix(first, []byte(`{"$ansightEncoding"`)) {
			t.Fatalf("%+v: answer of %d bytes not compressed", q, len(first))
		}
		json1, err := wire.DecodePayload(first, 0)
		if err != nil {
			t.Fatal(err)
		}
		p := wire.PrefixOf(first, json1)
		if p == nil {
			t.Fatalf("%+v: no shared prefix", q)
		}
		for i := 1; i < 4; i++ {
			next := checkPayload(t, s, &q, down, testNow.Add(time.Duration(i)*time.Second+time.Duration(i)))
			tail, ok := p.Tail(next, 0)
			if !ok {
				t.Fatalf("%+v, again: the compressed head changed", q)
			}
			if q.Detail == "definitions" {
				if !bytes.Equal(next, first) || string(tail) != "}" {
					t.Fatalf("definitions changed between two queries")
				}
			} else if !bytes.HasPrefix(tail, []byte(`,"evaluatedAtUtc":`)) {
				t.Fatalf("%+v: stored tail %q", q, tail)
			}
		}
		// Another availability: the index and full answers change, definitions do not.
		other := checkPayload(t, s, &q, nil, testNow)
		if _, ok := p.Tail(other, 0); ok != (q.Detail == "definitions") {
			t.Errorf("%+v in another state: shares the head %t", q, ok)
		}
	}
	if n := len(s.answers.m); n != 7 {
		t.Errorf("%d answers kept, want 7 (per query and state; definitions for both states)", n)
	}
}

// The cache keeps at most maxCachedAnswers answers.
func TestAnswerPayloadBounded(t *testing.T) {
	s := mustSet(t, fixtureDefs(), GuardReadWrite)
	for limit := 1; limit <= 3*maxCachedAnswers; limit++ {
		checkPayload(t, s, &wire.Query{Detail: "index", Limit: limit}, nil, testNow)
	}
	if n := len(s.answers.m); n > maxCachedAnswers {
		t.Errorf("%d answers kept", n)
	}
}

// Concurrent queries in alternating states get the answer of their own state.
func TestAnswerPayloadConcurrent(t *testing.T) {
	s := mustSet(t, bigDefs(300), GuardReadWrite)
	states := []map[string]wire.Runtime{nil, {"bench.tool_0001": {Code: "x"}}, {"bench.tool_0002": {Code: "y"}}}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 50 {
				st := states[(i+w)%len(states)]
				checkPayload(t, s, &wire.Query{Detail: []string{"index", "full", "definitions"}[i%3]}, st, testNow.Add(time.Duration(i)))
			}
		})
	}
	wg.Wait()
}
