package catalog

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"pgregory.net/rapid"

	"github.com/ansight-go/ansight/wire"
)

// The generators are made per use: a rapid generator is not safe for concurrent use (it
// caches its description lazily), and the property tests run in parallel.
func genText() *rapid.Generator[string] {
	return rapid.Map(rapid.OneOf(
		rapid.StringMatching(`[A-Za-z0-9 .,_-]{0,20}`),
		rapid.StringN(0, 12, -1), // any valid UTF-8, control characters included
	), func(s string) string { return "T" + s })
}

func genPolicy() *rapid.Generator[wire.Policy] {
	return rapid.SampledFrom([]wire.Policy{wire.PolicyRead, wire.PolicyWrite, wire.PolicyCritical})
}

func genSchema() *rapid.Generator[string] {
	return rapid.SampledFrom([]string{
		`{"type":"object"}`,
		`{"type":"object","properties":{"a":{"type":"string","minLength":1}},"required":["a"]}`,
		`{"type":"object","additionalProperties":true}`,
		`{"type":"object","properties":{"n":{"type":"number","maximum":1E2}},"additionalProperties":false}`,
		`{"type":"object","properties":{"s":{"type":"string","description":"<\u00e9>\n"}}}`,
	})
}

func genGuard() *rapid.Generator[Guard] {
	return rapid.Custom(func(t *rapid.T) Guard {
		return Guard{rapid.Bool().Draw(t, "discovery"), rapid.Bool().Draw(t, "execution"), genPolicy().Draw(t, "max")}
	})
}

func genDefs(t *rapid.T) []Definition {
	ids := rapid.SliceOfNDistinct(rapid.StringMatching(`[a-c]{1,3}(\.[a-c_]{1,3})?`), 0, 12, rapid.ID[string]).Draw(t, "ids")
	defs := make([]Definition, len(ids))
	for i, id := range ids {
		defs[i] = Definition{
			ID: id, Name: genText().Draw(t, "name"), Description: genText().Draw(t, "description"),
			Category: rapid.SampledFrom([]string{"a", "b", "Ünï", "c d"}).Draw(t, "category"),
			Policy:   genPolicy().Draw(t, "policy"), ArgumentsSchema: jsontext.Value(genSchema().Draw(t, "args")),
			ResultSchema:        jsontext.Value(genSchema().Draw(t, "result")),
			Keywords:            rapid.SampledFrom([]string{"", " ", "alpha beta", "\"quoted\""}).Draw(t, "keywords"),
			PrerequisiteToolIDs: rapid.SliceOfN(rapid.SampledFrom([]string{"a", " b ", "", "a.b"}), 0, 3).Draw(t, "prereqs"),
			ArgumentEncoding:    rapid.SampledFrom([]string{"", "json", "flattened-string"}).Draw(t, "encoding"),
		}
	}
	return defs
}

func genDown(t *rapid.T, defs []Definition) map[string]wire.Runtime {
	down := map[string]wire.Runtime{}
	for _, d := range defs {
		if rapid.IntRange(0, 3).Draw(t, "down") == 0 {
			down[d.ID] = wire.Runtime{Code: rapid.SampledFrom([]wire.Code{"", "x_y"}).Draw(t, "code"), Reason: genText().Draw(t, "reason"),
				RequiredState: rapid.SampledFrom([]string{"", "s"}).Draw(t, "state"), Retryable: rapid.Bool().Draw(t, "retryable")}
		}
	}
	return down
}

func genQuery(t *rapid.T, s *Set) wire.Query {
	q := wire.Query{
		Detail:         rapid.SampledFrom([]string{"", "index", "definitions", "full", "Index", "x"}).Draw(t, "detail"),
		Query:          rapid.SampledFrom([]string{"", "a", "b c", "ünï"}).Draw(t, "query"),
		Policy:         rapid.SampledFrom([]string{"", "read", "WRITE", "delete", "x"}).Draw(t, "policy"),
		ExecutableOnly: rapid.Bool().Draw(t, "executableOnly"),
		Limit:          rapid.IntRange(-1, 5).Draw(t, "limit"),
	}
	if rapid.Bool().Draw(t, "withRevision") {
		q.IfRevision = s.Revision()
	}
	if rapid.Bool().Draw(t, "withAvailability") {
		q.IfAvailabilityRevision = rapid.SampledFrom([]string{"x", s.availabilityOf(nil).revision}).Draw(t, "ifAvailability")
	}
	return q
}

// shuffle puts xs in an order t draws and returns it.
func shuffle[E any](t *rapid.T, xs []E) []E {
	for i := len(xs) - 1; i > 0; i-- {
		j := rapid.IntRange(0, i).Draw(t, "swap")
		xs[i], xs[j] = xs[j], xs[i]
	}
	return xs
}

// Revisions depend on the registered content, not on the order of registration.
func TestPropertyRevisionsIgnoreOrder(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		defs := genDefs(t)
		g := genGuard().Draw(t, "guard")
		down := genDown(t, defs)
		a, err := NewSet(defs, g)
		if err != nil {
			t.Fatal(err)
		}
		shuffled := shuffle(t, slices.Clone(defs))
		b, err := NewSet(shuffled, g)
		if err != nil {
			t.Fatal(err)
		}
		if a.Revision() != b.Revision() || a.availabilityOf(down).revision != b.availabilityOf(down).revision {
			t.Fatal("revision depends on registration order")
		}
		for _, ta := range a.Tools() {
			tb, _ := b.Lookup(ta.Def.ID)
			if ta.DefinitionRevision != tb.DefinitionRevision {
				t.Fatalf("%s: definitionRevision depends on order", ta.Def.ID)
			}
		}
		// Defs already in id order (as an app keeps them) take NewSetOf's path without a
		// sort, and must give the same Set.
		inOrder := slices.Clone(defs)
		slices.SortFunc(inOrder, func(x, y Definition) int { return strings.Compare(x.ID, y.ID) })
		c, err := NewSet(inOrder, g)
		if err != nil {
			t.Fatal(err)
		}
		if c.Revision() != a.Revision() || !slices.EqualFunc(c.Tools(), a.Tools(), func(x, y *Tool) bool { return x.Def.ID == y.Def.ID }) {
			t.Fatal("a Set of sorted defs differs from one of the same defs in another order")
		}
		// Cached and fresh availability revisions agree.
		fresh, _ := NewSet(defs, g)
		if fresh.availabilityOf(down).revision != a.availabilityOf(down).revision {
			t.Fatal("cached availability revision is stale")
		}
	})
}

// Every payload decodes strictly into wire.Catalog and re-encodes to the same JSON.
func TestPropertyPayloadRoundTrip(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		defs := genDefs(t)
		s, err := NewSet(defs, genGuard().Draw(t, "guard"))
		if err != nil {
			t.Fatal(err)
		}
		q := genQuery(t, s)
		payload, err := s.Answer(&q, genDown(t, defs), testNow)
		if !s.Guard().DiscoveryEnabled {
			if wire.CodeOf(err) != wire.CodeDiscoveryDisabled {
				t.Fatalf("disabled discovery answered %s, %v", payload, err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		var c wire.Catalog
		if err := wire.Unmarshal(payload, &c); err != nil {
			t.Fatalf("decode %s: %v", payload, err)
		}
		again, err := wire.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		x, y := jsontext.Value(slices.Clone(payload)), jsontext.Value(again)
		if err := x.Canonicalize(); err != nil {
			t.Fatal(err)
		}
		if err := y.Canonicalize(); err != nil {
			t.Fatal(err)
		}
		if string(x) != string(y) {
			t.Fatalf("round trip differs:\n%s\n%s", x, y)
		}
		if c.Count != nil && *c.Count != len(c.Tools) {
			t.Fatal("count != len(tools)")
		}
	})
}

// Definitions fetched by id carry the definitionRevision the index advertised, and that
// revision is the hash of the entry itself without definitionRevision.
func TestPropertyDefinitionsMatchIndex(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		defs := genDefs(t)
		s, err := NewSet(defs, GuardFullAccess)
		if err != nil {
			t.Fatal(err)
		}
		index, err := s.Answer(&wire.Query{Detail: "index"}, nil, testNow)
		if err != nil {
			t.Fatal(err)
		}
		var ic wire.Catalog
		if err := wire.Unmarshal(index, &ic); err != nil {
			t.Fatal(err)
		}
		if len(ic.Tools) == 0 {
			return
		}
		pick := rapid.SampledFrom(ic.Tools).Draw(t, "tool")
		b, err := s.Answer(&wire.Query{Detail: "definitions", IDs: []string{pick.ID}}, nil, testNow)
		if err != nil {
			t.Fatal(err)
		}
		var raw struct {
			Tools []map[string]jsontext.Value `json:"tools"`
		}
		if err := wire.Unmarshal(b, &raw); err != nil || len(raw.Tools) != 1 {
			t.Fatalf("definitions %s: %v", b, err)
		}
		entry := raw.Tools[0]
		var rev string
		if err := wire.Unmarshal(entry["definitionRevision"], &rev); err != nil {
			t.Fatal(err)
		}
		if rev != pick.DefinitionRevision {
			t.Fatalf("definitions revision %s, index %s", rev, pick.DefinitionRevision)
		}
		delete(entry, "definitionRevision")
		static, err := wire.Marshal(entry)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := canonicalRevision(static); got != rev {
			t.Fatalf("definitionRevision %s is not the hash of the entry (%s)", rev, got)
		}
	})
}

// appendString writes RFC 8785 strings (the catalog and availability revisions are hashed
// from pieces written with it).
func TestPropertyStringsAreCanonical(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.String().Draw(t, "s")
		b, err := appendString(nil, s)
		if err != nil {
			t.Fatal(err)
		}
		c := jsontext.Value(slices.Clone(b))
		if err := c.Canonicalize(); err != nil {
			t.Fatal(err)
		}
		if string(c) != string(b) {
			t.Fatalf("%q: wrote %s, canonical %s", s, b, c)
		}
	})
}

// A Set of tools made one by one (NewTool, as an app makes them when they are registered,
// then NewSetOf in any order) is the Set NewSet makes of their definitions: the same
// revision and, byte for byte, the same answers, searches included (the search text is
// made by the first search). Duplicate ids are refused by both.
func TestPropertyNewSetOfIsNewSet(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		defs := genDefs(t)
		g := genGuard().Draw(t, "guard")
		want, err := NewSet(defs, g)
		if err != nil {
			t.Fatal(err)
		}
		var tools []*Tool
		for _, d := range defs {
			tool, err := NewTool(d)
			if err != nil {
				t.Fatal(err)
			}
			tools = append(tools, tool)
		}
		got, err := NewSetOf(shuffle(t, tools), g)
		if err != nil {
			t.Fatal(err)
		}
		if got.Revision() != want.Revision() {
			t.Fatalf("revision %s, NewSet's %s", got.Revision(), want.Revision())
		}
		down := genDown(t, defs)
		for range 3 {
			q := genQuery(t, want)
			a, aerr := got.Answer(&q, down, testNow)
			b, berr := want.Answer(&q, down, testNow)
			if !bytes.Equal(a, b) || (aerr == nil) != (berr == nil) {
				t.Fatalf("query %+v: %s (%v), NewSet's %s (%v)", q, a, aerr, b, berr)
			}
		}
		if len(tools) > 0 {
			if _, err := NewSetOf(append(tools, tools[0]), g); err == nil {
				t.Fatal("NewSetOf took a duplicate id")
			}
		}
	})
}
