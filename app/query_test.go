package app

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// referenceQuery is parseQuery's reading, written the plain way: the strict decoder into a
// map, each string member decoded by it too.
func referenceQuery(payload jsontext.Value, known func(string) bool) wire.Query {
	q := wire.Query{Detail: wire.DetailFull, Limit: wire.DefaultQueryLimit}
	m, ok := plainQueryMembers(payload)
	if payload.Kind() != '{' || !ok {
		return q
	}
	str := func(k int) (string, bool) {
		var s string
		if m[k].Kind() != '"' || wire.Unmarshal(m[k], &s) != nil {
			return "", false
		}
		return s, true
	}
	// The members that are not strings are read by queryMembers.query alone: clear the
	// strings, let it read the rest, then set the strings as decoded here.
	rest := m
	for _, k := range []int{qDetail, qQuery, qFeature, qPolicy, qIfRevision, qIfAvailabilityRevision} {
		rest[k] = nil
	}
	q = rest.query(q, known)
	if s, ok := str(qDetail); ok {
		switch d := strings.ToLower(strings.TrimSpace(s)); d {
		case wire.DetailIndex, wire.DetailDefinitions:
			q.Detail = d
		}
	}
	q.Query, _ = str(qQuery)
	q.Feature, _ = str(qFeature)
	q.Policy, _ = str(qPolicy)
	if s, ok := str(qIfRevision); ok {
		q.IfRevision = strings.TrimSpace(s)
	}
	if s, ok := str(qIfAvailabilityRevision); ok {
		q.IfAvailabilityRevision = strings.TrimSpace(s)
	}
	return q
}

// FuzzParseQuery holds parseQuery's one-pass reading (scanQuery) to the plain one: the
// same members, byte for byte, for every payload the strict decoder takes, a refusal for
// every payload it refuses (objects: parseQuery reads nothing else), and the same query.
func FuzzParseQuery(f *testing.F) {
	for _, seed := range []string{
		``, `[1]`, `{}`, ` { } `, `{"detail":" INDEX "}`, `{"detail":7}`,
		`{"detail":"index","ifRevision":"r1","ifAvailabilityRevision":"a1"}`,
		`{"ids":["a"," b ","a","",3,null,{"x":["y"]},"c"]}`, `{"ids":"a"}`,
		`{"query":"x y","feature":"z","policy":"Write","executableOnly":true}`,
		`{"limit":5,"maxResults":3}`, `{"limit":2.5e1}`, `{"limit":null,"maxResults":3}`,
		`{"ifRevision":"\u0072\n","detail":"\u0069ndex"}`, `{"d\u0065tail":"index"}`,
		`{"detail":"index","detail":"full"}`, `{"detail":"index","Detail":"full"}`,
		"{\"query\":\"\xff\"}", `{"x":{"a":1,"a":2}}`, `{"limit":01}`, `{"limit":5} x`,
		`{"ifRevision":"\ud83d\ude00"}`, `{"ifRevision":"\ud83d"}`, `{"other":[[[[]]]],"limit":7}`,
	} {
		f.Add([]byte(seed))
	}
	known := func(id string) bool { return id == "a" || id == "b" || id == "c" }
	f.Fuzz(func(t *testing.T, payload []byte) {
		if jsontext.Value(payload).Kind() == '{' { // parseQuery reads members of an object only
			fast, fastOK := scanQuery(payload)
			plain, plainOK := plainQueryMembers(payload)
			if fastOK != plainOK {
				t.Fatalf("%q: one pass took it %t, the strict decoder %t", payload, fastOK, plainOK)
			}
			for k := range fast {
				if (fast[k] == nil) != (plain[k] == nil) || !bytes.Equal(fast[k], plain[k]) {
					t.Fatalf("%q: member %s: one pass %q, strict decoder %q", payload, queryNames[k], fast[k], plain[k])
				}
			}
		}
		if got, want := parseQuery(payload, known), referenceQuery(payload, known); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", payload, got, want)
		}
	})
}

// TestParseQueryAllocations: the query a polling host sends (ifRevision) is read without
// a map or reflection.
func TestParseQueryAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector inflates allocation counts")
	}
	payload := jsontext.Value(`{"detail":"index","ifRevision":"0123456789abcdef","ifAvailabilityRevision":"fedcba9876543210"}`)
	parseQuery(payload, nil) // the pool's scanner
	allocs := testing.AllocsPerRun(100, func() { parseQuery(payload, nil) })
	// The detail and the two revisions' strings; nothing else.
	if allocs > 3 {
		t.Errorf("parseQuery of an ifRevision query: %.0f allocations, want at most 3", allocs)
	}
}

// TestQueryAvailabilityAcrossQueries: the map of unavailable tools a query builds is
// reused by later queries (unavailableMaps) and must carry nothing from one to the next.
func TestQueryAvailabilityAcrossQueries(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	query := func(ifRevision, ifAvailability string) wire.Catalog {
		t.Helper()
		msg := `{"type":"tool.query","id":"q","payload":{"detail":"index","ifRevision":"` + ifRevision + `","ifAvailabilityRevision":"` + ifAvailability + `"}}`
		_, p := response(t, f.handle(t, msg))
		var cat wire.Catalog
		if err := wire.Unmarshal(p, &cat); err != nil {
			t.Fatalf("%v\n%s", err, p)
		}
		return cat
	}
	f.set("map.loaded", "false")
	f.set("demo.flaky", "down")
	both := query("", "")
	if both.AvailabilityRevision == "" || len(both.Tools) == 0 {
		t.Fatalf("first answer: %+v", both)
	}
	f.set("map.loaded", "true")
	f.set("demo.flaky", "up")
	up := query(both.Revision, both.AvailabilityRevision)
	if up.Unchanged != true || up.AvailabilityRevision == "" || up.AvailabilityRevision == both.AvailabilityRevision {
		t.Fatalf("all up: %+v", up)
	}
	for id, rt := range up.Changes {
		t.Errorf("all up, yet %s: %+v", id, rt)
	}
	f.set("demo.flaky", "down")
	flaky := query(both.Revision, up.AvailabilityRevision)
	if len(flaky.Changes) != 1 || flaky.Changes["demo.flaky"].Available {
		t.Fatalf("only demo.flaky down: %+v", flaky)
	}
	f.set("map.loaded", "false")
	if same := query(both.Revision, both.AvailabilityRevision); !same.Unchanged || same.AvailabilityRevision != "" {
		t.Fatalf("both down again, as at first: %+v", same)
	}
}
