package catalog

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

var testNow = time.Date(2026, 3, 20, 10, 0, 0, 123000000, time.UTC)

func def(id string, p wire.Policy, category string) Definition {
	return Definition{
		ID: id, Name: "Tool " + id, Description: "Does " + id + ".", Category: category, Policy: p,
		ArgumentsSchema: jsontext.Value(`{"type":"object","properties":{"x":{"type":"integer"}}}`),
		ResultSchema:    jsontext.Value(`{"type":"object"}`),
	}
}

// fixture: five tools over three categories and all policies.
func fixtureDefs() []Definition {
	a := def("map.capture", wire.PolicyRead, "map")
	a.Keywords = "screenshot snapshot"
	a.PrerequisiteToolIDs = []string{" route.open ", "map.load", "route.open", ""}
	b := def("map.load", wire.PolicyWrite, "map")
	c := def("route.open", wire.PolicyRead, "routing")
	c.ArgumentEncoding = wire.ArgumentEncodingFlattenedString
	d := def("notes.delete", wire.PolicyCritical, "notes")
	e := def("notes.list", wire.PolicyRead, "notes")
	return []Definition{e, d, c, b, a} // deliberately unsorted
}

func mustSet(t testing.TB, defs []Definition, g Guard) *Set {
	t.Helper()
	s, err := NewSet(defs, g)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// answer runs a query and decodes the payload strictly.
func answer(t testing.TB, s *Set, q wire.Query, down map[string]wire.Runtime) (*wire.Catalog, map[string]jsontext.Value) {
	t.Helper()
	b, err := s.Answer(&q, down, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if !jsontext.Value(b).IsValid() {
		t.Fatalf("invalid JSON: %s", b)
	}
	var c wire.Catalog
	if err := wire.Unmarshal(b, &c); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	var keys map[string]jsontext.Value
	if err := wire.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	return &c, keys
}

func keyList(m map[string]jsontext.Value) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sortStrings(ks)
	return strings.Join(ks, ",")
}

func ids(c *wire.Catalog) string {
	var out []string
	for _, e := range c.Tools {
		out = append(out, e.ID)
	}
	return strings.Join(out, ",")
}

var lockedNotes = map[string]wire.Runtime{
	"notes.list": {Code: "store_locked", Reason: "Unlock first.", Retryable: true},
}

func TestAnswerDecisionTable(t *testing.T) {
	t.Parallel()
	s := mustSet(t, fixtureDefs(), GuardReadWrite)
	_, full := answer(t, s, wire.Query{}, nil)
	_ = full
	avAll := s.availabilityOf(nil).revision
	avLocked := s.availabilityOf(lockedNotes).revision
	if avAll == avLocked {
		t.Fatal("availability revision does not depend on runtime state")
	}

	tests := []struct {
		name  string
		q     wire.Query
		down  map[string]wire.Runtime
		keys  string // sorted top-level keys
		check func(t *testing.T, c *wire.Catalog)
	}{
		{"no conditions: full", wire.Query{}, nil,
			"availabilityRevision,categories,count,evaluatedAtUtc,revision,schema,tools,totalCount", nil},
		{"revision matches, no availability given: unchanged even when availability changed",
			wire.Query{IfRevision: s.Revision()}, lockedNotes, "revision,schema,unchanged", nil},
		{"both match: unchanged", wire.Query{IfRevision: s.Revision(), IfAvailabilityRevision: avLocked}, lockedNotes,
			"revision,schema,unchanged", nil},
		{"both match, index: unchanged", wire.Query{Detail: "index", IfRevision: " " + s.Revision() + " ", IfAvailabilityRevision: avAll}, nil,
			"revision,schema,unchanged", nil},
		{"filters are ignored by the short forms", wire.Query{IfRevision: s.Revision(), IDs: []string{"nope"}, Policy: "bogus"}, nil,
			"revision,schema,unchanged", nil},
		{"availability differs: changes", wire.Query{IfRevision: s.Revision(), IfAvailabilityRevision: avAll}, lockedNotes,
			"availabilityRevision,changes,evaluatedAtUtc,revision,schema,unchanged", func(t *testing.T, c *wire.Catalog) {
				if c.AvailabilityRevision != avLocked || !c.Unchanged || len(c.Changes) != 1 ||
					c.Changes["notes.list"] != (wire.Runtime{Code: "store_locked", Reason: "Unlock first.", Retryable: true}) {
					t.Errorf("changes form %+v", c)
				}
			}},
		{"everything became available: empty changes", wire.Query{IfRevision: s.Revision(), IfAvailabilityRevision: avLocked}, nil,
			"availabilityRevision,changes,evaluatedAtUtc,revision,schema,unchanged", func(t *testing.T, c *wire.Catalog) {
				if len(c.Changes) != 0 || c.AvailabilityRevision != avAll {
					t.Errorf("changes form %+v", c)
				}
			}},
		{"revision differs, availability matches: full", wire.Query{IfRevision: "sha256:old", IfAvailabilityRevision: avAll}, nil,
			"availabilityRevision,categories,count,evaluatedAtUtc,revision,schema,tools,totalCount", nil},
		{"definitions never short-circuit", wire.Query{Detail: "definitions", IfRevision: s.Revision()}, nil,
			"count,detail,revision,schema,tools", func(t *testing.T, c *wire.Catalog) {
				if c.Detail != "definitions" || *c.Count != 4 {
					t.Errorf("definitions %+v", c)
				}
			}},
		{"definitions with both revisions: still full", wire.Query{Detail: "DEFINITIONS", IfRevision: s.Revision(), IfAvailabilityRevision: "x"}, nil,
			"count,detail,revision,schema,tools", nil},
		{"index", wire.Query{Detail: "index"}, nil,
			"availabilityRevision,categories,count,detail,evaluatedAtUtc,revision,schema,tools,totalCount", func(t *testing.T, c *wire.Catalog) {
				if c.Detail != "index" {
					t.Errorf("detail %q", c.Detail)
				}
			}},
		{"unknown detail is full", wire.Query{Detail: "everything"}, nil,
			"availabilityRevision,categories,count,evaluatedAtUtc,revision,schema,tools,totalCount", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, keys := answer(t, s, tc.q, tc.down)
			if got := keyList(keys); got != tc.keys {
				t.Errorf("keys %s, want %s", got, tc.keys)
			}
			if c.Schema != wire.CatalogSchema || c.Revision != s.Revision() {
				t.Errorf("schema %q revision %q", c.Schema, c.Revision)
			}
			if keys["unchanged"] != nil && string(keys["unchanged"]) != "true" {
				t.Errorf("unchanged = %s", keys["unchanged"])
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

func TestAnswerDiscoveryDisabled(t *testing.T) {
	t.Parallel()
	s := mustSet(t, fixtureDefs(), GuardDisabled)
	b, err := s.Answer(&wire.Query{IfRevision: s.Revision()}, nil, testNow)
	if b != nil || wire.CodeOf(err) != wire.CodeDiscoveryDisabled {
		t.Fatalf("Answer = %s, %v", b, err)
	}
	var we *wire.Error
	if !errors.As(err, &we) || we.Retryable {
		t.Fatalf("error %#v", err)
	}
	if len(s.Visible()) != 0 {
		t.Fatal("tools visible with discovery disabled")
	}
}

// substrings lists the distinct substrings of the words: as many query terms as one wants
// that the words contain.
func substrings(words ...string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range words {
		for i := range w {
			for j := i + 1; j <= len(w); j++ {
				if !seen[w[i:j]] {
					seen[w[i:j]] = true
					out = append(out, w[i:j])
				}
			}
		}
	}
	return out
}

func TestAnswerFilters(t *testing.T) {
	t.Parallel()
	s := mustSet(t, fixtureDefs(), GuardFullAccess)
	many := strings.Join(substrings("screenshot"), " ")
	if len(substrings("screenshot")) <= fewTerms {
		t.Fatal("the many-term query is too short")
	}
	down := map[string]wire.Runtime{"map.load": {Code: "no_map"}, "unknown.tool": {}}
	tests := []struct {
		name string
		q    wire.Query
		want string
	}{
		{"all, sorted by id", wire.Query{}, "map.capture,map.load,notes.delete,notes.list,route.open"},
		{"ids exact, order ignored, blanks dropped", wire.Query{IDs: []string{"route.open", " map.load ", "", "map.load"}}, "map.load,route.open"},
		{"ids case-sensitive", wire.Query{IDs: []string{"Map.Load"}}, ""},
		{"ids unknown", wire.Query{IDs: []string{"x.y"}}, ""},
		{"policy", wire.Query{Policy: "read"}, "map.capture,notes.list,route.open"},
		{"policy case-insensitive", wire.Query{Policy: "WRITE"}, "map.load"},
		{"policy delete alias", wire.Query{Policy: "Delete"}, "notes.delete"},
		{"policy unknown matches nothing", wire.Query{Policy: "admin"}, ""},
		{"executableOnly", wire.Query{ExecutableOnly: true}, "map.capture,notes.delete,notes.list,route.open"},
		{"query term", wire.Query{Query: "NOTES"}, "notes.delete,notes.list"},
		{"query substring", wire.Query{Query: "snap"}, "map.capture"},
		{"query splits on punctuation", wire.Query{Query: "map.cap"}, "map.capture"},
		{"query searches prerequisites", wire.Query{Query: "route"}, "map.capture,route.open"},
		{"query and feature are AND-ed", wire.Query{Query: "map", Feature: "load"}, "map.capture,map.load"},
		{"all terms must match", wire.Query{Query: "map zzz"}, ""},
		{"blank query", wire.Query{Query: " ,. "}, "map.capture,map.load,notes.delete,notes.list,route.open"},
		{"limit", wire.Query{Limit: 2}, "map.capture,map.load"},
		{"maxResults", wire.Query{MaxResults: 1}, "map.capture"},
		{"limit wins over maxResults", wire.Query{Limit: 3, MaxResults: 1}, "map.capture,map.load,notes.delete"},
		{"limit clamped up to 1", wire.Query{Limit: -5}, "map.capture"},
		{"limit clamped down to 1000", wire.Query{Limit: 5000}, "map.capture,map.load,notes.delete,notes.list,route.open"},
		{"limit applies last", wire.Query{Policy: "read", Limit: 2}, "map.capture,notes.list"},
		{"filters combine in order", wire.Query{IDs: []string{"map.load", "map.capture", "notes.list"}, ExecutableOnly: true, Query: "map"}, "map.capture"},
		// More than fewTerms distinct terms are matched term by term, with the same result.
		{"many terms", wire.Query{Query: many + " " + many}, "map.capture"},
		{"many terms, one absent", wire.Query{Query: many, Feature: "zzz"}, ""},
		{"many terms of different tools match none", wire.Query{Query: strings.Join(substrings("notes", "tool", "does", "snapshot"), " ")}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := answer(t, s, tc.q, down)
			if got := ids(c); got != tc.want {
				t.Errorf("tools %q, want %q", got, tc.want)
			}
			if *c.Count != len(c.Tools) || *c.TotalCount != 5 || c.Categories["map"] != 2 || c.Categories["notes"] != 2 || c.Categories["routing"] != 1 {
				t.Errorf("count %d totalCount %d categories %v", *c.Count, *c.TotalCount, c.Categories)
			}
		})
	}
}

func TestAnswerEntries(t *testing.T) {
	t.Parallel()
	down := map[string]wire.Runtime{"map.load": {Code: "no_map", Reason: "Load a map.", RequiredState: "map", Remediation: "Open one."}}
	for _, g := range []Guard{GuardReadWrite, {DiscoveryEnabled: true, ExecutionEnabled: false, MaxPolicy: wire.PolicyWrite}} {
		s := mustSet(t, fixtureDefs(), g)
		for _, detail := range []string{"index", "definitions", "full"} {
			t.Run(fmt.Sprintf("exec=%v/%s", g.ExecutionEnabled, detail), func(t *testing.T) {
				c, _ := answer(t, s, wire.Query{Detail: detail}, down)
				if got := ids(c); got != "map.capture,map.load,notes.list,route.open" {
					t.Fatalf("visible %s", got)
				}
				b, _ := s.Answer(&wire.Query{Detail: detail}, down, testNow)
				var raw struct {
					Tools []map[string]jsontext.Value `json:"tools"`
				}
				if err := wire.Unmarshal(b, &raw); err != nil {
					t.Fatal(err)
				}
				for i, e := range c.Tools {
					keys := keyList(raw.Tools[i])
					hasSchemas := e.ArgumentsSchema != nil && e.ResultSchema != nil
					if hasSchemas != (detail != "index") {
						t.Errorf("%s: schemas present = %v (%s)", e.ID, hasSchemas, keys)
					}
					if e.DefinitionRevision == "" {
						t.Errorf("%s: no definitionRevision", e.ID)
					}
					wantRuntime := detail != "definitions" && e.ID == "map.load"
					if (e.Runtime != nil) != wantRuntime {
						t.Errorf("%s: runtime %+v (%s)", e.ID, e.Runtime, keys)
					}
					if wantRuntime && *e.Runtime != down["map.load"] {
						t.Errorf("%s: runtime %+v", e.ID, *e.Runtime)
					}
					wantNotExec := detail != "definitions" && (e.ID == "map.load" || !g.ExecutionEnabled)
					if (e.Executable != nil) != wantNotExec || e.Executable != nil && *e.Executable {
						t.Errorf("%s: executable %v (%s)", e.ID, e.Executable, keys)
					}
					if (e.ArgumentEncoding != "") != (e.ID == "route.open" && detail != "index") {
						t.Errorf("%s: argumentEncoding %q", e.ID, e.ArgumentEncoding)
					}
					if e.ID == "map.capture" {
						if e.Keywords != "screenshot snapshot" || strings.Join(e.PrerequisiteToolIDs, ",") != "map.load,route.open" {
							t.Errorf("%s: keywords %q prerequisites %q", e.ID, e.Keywords, e.PrerequisiteToolIDs)
						}
					} else if strings.Contains(keys, "keywords") || strings.Contains(keys, "prerequisiteToolIds") {
						t.Errorf("%s: empty defaults written (%s)", e.ID, keys)
					}
				}
				if detail != "definitions" && !c.EvaluatedAtUtc.Equal(testNow) {
					t.Errorf("evaluatedAtUtc %v", c.EvaluatedAtUtc)
				}
			})
		}
	}
}

func TestAnswerZeroTools(t *testing.T) {
	t.Parallel()
	s := mustSet(t, nil, GuardReadOnly)
	c, keys := answer(t, s, wire.Query{}, nil)
	if *c.Count != 0 || *c.TotalCount != 0 || len(c.Tools) != 0 || string(keys["tools"]) != "[]" || string(keys["categories"]) != "{}" {
		t.Fatalf("empty catalog %+v %v", c, keys)
	}
}

func TestAnswerNilQueryAndHiddenUnavailable(t *testing.T) {
	t.Parallel()
	s := mustSet(t, fixtureDefs(), GuardReadOnly)
	// notes.delete is hidden: its unavailability changes neither the revision nor changes.
	hidden := map[string]wire.Runtime{"notes.delete": {Code: "x"}, "map.capture": {Available: true, Code: "ignored"}}
	b, err := s.Answer(nil, hidden, testNow)
	if err != nil {
		t.Fatal(err)
	}
	var c wire.Catalog
	if err := wire.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c.AvailabilityRevision != s.availabilityOf(nil).revision {
		t.Fatal("hidden or available entries changed the availability revision")
	}
	for _, e := range c.Tools {
		if e.Runtime != nil || e.Executable != nil {
			t.Fatalf("%s marked unavailable", e.ID)
		}
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// Concurrent queries in alternating runtime states share the availability cache safely
// and always answer with the revision of their own state.
func TestAnswerConcurrentStates(t *testing.T) {
	t.Parallel()
	s := mustSet(t, fixtureDefs(), GuardReadWrite)
	states := []map[string]wire.Runtime{nil, lockedNotes, {"map.load": {Code: "no_map"}}}
	want := make([]string, len(states))
	for i, st := range states {
		want[i] = mustSet(t, fixtureDefs(), GuardReadWrite).availabilityOf(st).revision
	}
	done := make(chan error)
	for w := range 4 {
		go func() {
			var err error
			for i := range 200 {
				k := (i + w) % len(states)
				b, aerr := s.Answer(&wire.Query{Detail: "index"}, states[k], testNow)
				var c wire.Catalog
				if aerr == nil {
					aerr = wire.Unmarshal(b, &c)
				}
				if aerr != nil {
					err = aerr
				} else if c.AvailabilityRevision != want[k] && err == nil {
					err = fmt.Errorf("state %d: availability revision %s, want %s", k, c.AvailabilityRevision, want[k])
				}
			}
			done <- err
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// TestAnswerManyTerms: a query of more distinct terms than fewTerms (matched term by
// term) selects what matching every term against every tool selects.
func TestAnswerManyTerms(t *testing.T) {
	t.Parallel()
	var defs []Definition
	for _, id := range []string{"a.one", "b.two", "c.three", "d.four"} {
		d := def(id, wire.PolicyRead, "common")
		d.Description = "Shares a long description with every other tool here."
		defs = append(defs, d)
	}
	defs[2].Policy = wire.PolicyWrite
	s := mustSet(t, defs, GuardFullAccess)
	terms := substrings("shares", "description", "every")
	if len(terms) <= fewTerms {
		t.Fatal("the query is too short")
	}
	q := strings.Join(terms, " ")
	for _, tc := range []struct {
		q    wire.Query
		want string
	}{
		{wire.Query{Query: q}, "a.one,b.two,c.three,d.four"},
		{wire.Query{Query: q, Feature: "three"}, "c.three"},
		{wire.Query{Query: q, Policy: "read", Limit: 2}, "a.one,b.two"},
		{wire.Query{Query: q, Limit: 1, IDs: []string{"d.four", "c.three"}}, "c.three"},
		{wire.Query{Query: q + " absent"}, ""},
	} {
		t.Run(tc.want, func(t *testing.T) {
			c, _ := answer(t, s, tc.q, nil)
			if got := ids(c); got != tc.want {
				t.Errorf("%+v: tools %q, want %q", tc.q.Feature+tc.q.Policy, got, tc.want)
			}
		})
	}
}
