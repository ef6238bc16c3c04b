package tools

import (
	"errors"
	"slices"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

func threeTools() []wire.ToolEntry {
	return []wire.ToolEntry{
		tool("a.read", wire.PolicyRead, "def-a-1"),
		tool("b.write", wire.PolicyWrite, "def-b-1"),
		tool("c.critical", wire.PolicyCritical, "def-c-1"),
	}
}

// detailsOf summarizes queries as "detail:ids…" strings.
func detailsOf(qs []wire.Query) []string {
	var out []string
	for _, q := range qs {
		s := q.Detail
		if q.IfRevision != "" {
			s += "?" + q.IfRevision + "/" + q.IfAvailabilityRevision
		}
		for _, id := range q.IDs {
			s += " " + id
		}
		out = append(out, s)
	}
	return out
}

func TestCatalogTwoPhases(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, threeTools()...)
	hs := newHarness(t, Options{MaxToolPolicy: wire.PolicyCritical}, app.handler())
	ctx := t.Context()

	// First use: the index, then every definition.
	cat, err := hs.c.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := detailsOf(app.queryLog()), []string{"index", "definitions a.read b.write c.critical"}; !slices.Equal(got, want) {
		t.Fatalf("queries %q, want %q", got, want)
	}
	if cat.Revision != "rev-1" || cat.AvailabilityRevision != "avail-1" || len(cat.Tools) != 3 || cat.Categories["test"] != 3 {
		t.Fatalf("catalog %+v", cat)
	}
	for _, e := range cat.Tools {
		if len(e.ArgumentsSchema) == 0 || e.Denial != nil || !e.IsExecutable() {
			t.Errorf("entry %+v", e)
		}
	}

	// Unchanged: one conditional query, answered by the three-key form.
	cat2, err := hs.c.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := detailsOf(app.queryLog()), []string{"index?rev-1/avail-1"}; !slices.Equal(got, want) {
		t.Fatalf("queries %q, want %q", got, want)
	}
	if cat2 != cat {
		t.Error("an unchanged catalog should give the same snapshot")
	}

	// One definition changes: full index, then only that definition.
	app.set(func(a *fakeApp) {
		a.revision = "rev-2"
		a.tools[1].DefinitionRevision = "def-b-2"
		a.tools[1].Description = "new description"
		a.tools[1].ArgumentsSchema = jsontext.Value(`{"type":"object","properties":{"m":{"type":"string"}}}`)
	})
	cat3, err := hs.c.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := detailsOf(app.queryLog()), []string{"index?rev-1/avail-1", "definitions b.write"}; !slices.Equal(got, want) {
		t.Fatalf("queries %q, want %q", got, want)
	}
	b := cat3.Tool("b.write")
	if b.Description != "new description" || string(b.ArgumentsSchema) != `{"type":"object","properties":{"m":{"type":"string"}}}` {
		t.Errorf("b.write not updated: %+v", b)
	}
	if a := cat3.Tool("a.read"); len(a.ArgumentsSchema) == 0 {
		t.Error("a.read lost its cached definition")
	}

	// A tool is removed and one added: only the new one is fetched.
	app.set(func(a *fakeApp) {
		a.revision = "rev-3"
		a.tools = append(a.tools[:2], tool("d.read", wire.PolicyRead, "def-d-1"))
	})
	cat4, err := hs.c.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := detailsOf(app.queryLog()), []string{"index?rev-2/avail-1", "definitions d.read"}; !slices.Equal(got, want) {
		t.Fatalf("queries %q, want %q", got, want)
	}
	if cat4.Tool("c.critical") != nil || cat4.Tool("d.read") == nil {
		t.Errorf("tools %v", ids(cat4))
	}
}

func ids(c *Catalog) []string {
	var out []string
	for _, e := range c.Tools {
		out = append(out, e.ID)
	}
	return out
}

func TestCatalogAvailabilityOnly(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, threeTools()...)
	hs := newHarness(t, Options{MaxToolPolicy: wire.PolicyCritical}, app.handler())
	ctx := t.Context()
	if _, err := hs.c.Catalog(ctx); err != nil {
		t.Fatal(err)
	}
	app.queryLog()

	app.set(func(a *fakeApp) {
		a.availabilityRevision = "avail-2"
		a.unavailable["b.write"] = wire.Runtime{Available: false, Code: "map_not_loaded", Reason: "Load a map first.", Retryable: true}
	})
	cat, err := hs.c.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := detailsOf(app.queryLog()), []string{"index?rev-1/avail-1"}; !slices.Equal(got, want) {
		t.Fatalf("queries %q, want %q", got, want)
	}
	if cat.AvailabilityRevision != "avail-2" {
		t.Errorf("availability revision %q", cat.AvailabilityRevision)
	}
	b := cat.Tool("b.write")
	if b.IsExecutable() || b.Denial == nil || b.Denial.Code != "map_not_loaded" || b.Denial.Reason != "Load a map first." {
		t.Errorf("b.write %+v denial %+v", b, b.Denial)
	}
	if len(b.ArgumentsSchema) == 0 {
		t.Error("definition lost when availability changed")
	}

	// The call is refused locally with the app's code and retryable flag.
	_, err = hs.c.Call(ctx, wire.Call{ToolID: "b.write"})
	re, ok := errorsAs[*RefusalError](err)
	if !ok || re.Err.Code != "map_not_loaded" || !re.Err.Retryable || re.Index != -1 {
		t.Fatalf("err = %v", err)
	}

	// {} : everything available again.
	app.set(func(a *fakeApp) {
		a.availabilityRevision = "avail-3"
		delete(a.unavailable, "b.write")
	})
	cat, err = hs.c.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b := cat.Tool("b.write"); !b.IsExecutable() || b.Denial != nil || b.Runtime != nil {
		t.Errorf("b.write still unavailable: %+v", b)
	}
	if n := app.callCount(); n != 0 {
		t.Errorf("%d calls reached the app", n)
	}
}

func TestCatalogAnnotations(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, threeTools()...)
	app.unavailable["a.read"] = wire.Runtime{Available: false}
	hs := newHarness(t, Options{MaxToolPolicy: wire.PolicyWrite}, app.handler())
	cat, err := hs.c.Catalog(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]wire.Code{
		"a.read":     wire.CodeUnavailable,
		"b.write":    "",
		"c.critical": wire.CodePolicyNotGranted,
	}
	for id, code := range want {
		e := cat.Tool(id)
		switch {
		case code == "" && (e.Denial != nil || !e.IsExecutable()):
			t.Errorf("%s: %+v", id, e.Denial)
		case code != "" && (e.Denial == nil || e.Denial.Code != code || e.IsExecutable() || e.Denial.Reason == ""):
			t.Errorf("%s: denial %+v, want %s", id, e.Denial, code)
		}
	}
	if r := cat.Tool("c.critical").Denial.Reason; r != "Tool policy 'critical' exceeds the session grant 'write'." {
		t.Errorf("reason %q", r)
	}

	// The guard forbids execution: executable:false on available tools.
	app.set(func(a *fakeApp) {
		a.revision = "rev-2"
		a.guardDenied = true
		a.unavailable = map[string]wire.Runtime{}
	})
	cat, err = hs.c.Catalog(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d := cat.Tool("b.write").Denial; d == nil || d.Code != wire.CodeNotExecutable {
		t.Errorf("b.write denial %+v", d)
	}
	// ... and that survives an availability-only update.
	app.set(func(a *fakeApp) { a.availabilityRevision = "avail-2" })
	cat, err = hs.c.Catalog(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d := cat.Tool("b.write").Denial; d == nil || d.Code != wire.CodeNotExecutable {
		t.Errorf("b.write denial after availability update %+v", d)
	}
}

func TestCatalogDefaultGrantIsRead(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, threeTools()...)
	hs := newHarness(t, Options{}, app.handler())
	cat, err := hs.c.Catalog(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d := cat.Tool("b.write").Denial; d == nil || d.Code != wire.CodePolicyNotGranted {
		t.Errorf("b.write denial %+v", d)
	}
}

func TestCatalogLegacyWithoutDetail(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, threeTools()...)
	app.legacy = true
	hs := newHarness(t, Options{MaxToolPolicy: wire.PolicyCritical}, app.handler())
	cat, err := hs.c.Catalog(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := detailsOf(app.queryLog()); !slices.Equal(got, []string{"index"}) {
		t.Fatalf("queries %q: a catalog without detail holds the definitions", got)
	}
	for _, e := range cat.Tools {
		if len(e.ArgumentsSchema) == 0 {
			t.Errorf("%s has no schema", e.ID)
		}
	}
	if _, err := hs.c.Describe(t.Context(), "b.write"); err != nil {
		t.Fatal(err)
	}
}

func TestCatalogSwiftVariants(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t)
	// executable:false inside runtime, "Z" without fraction, "delete" policy alias, no
	// definitionRevision, revisions in another form.
	app.rawCatalog = `{"schema":"ansight.tool-catalog.v3","revision":"9f2c","tools":[` +
		`{"id":"files.delete_file","name":"Delete","description":"d","category":"files","policy":"delete",` +
		`"argumentsSchema":{"type":"object"},"resultSchema":{"type":"object"}},` +
		`{"id":"ui.inspect","name":"Inspect","description":"i","category":"ui","policy":"Read",` +
		`"argumentsSchema":{"type":"object"},"resultSchema":{"type":"object"},"runtime":{"available":true,"executable":false},"executable":false}` +
		`],"count":2,"availabilityRevision":"a1","evaluatedAtUtc":"2026-03-20T10:00:00Z","totalCount":2,"categories":{"files":1,"ui":1}}`
	hs := newHarness(t, Options{MaxToolPolicy: wire.PolicyCritical}, app.handler())
	cat, err := hs.c.Catalog(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if e := cat.Tool("files.delete_file"); e.Policy != wire.PolicyCritical || e.Denial != nil {
		t.Errorf("delete alias: %+v", e)
	}
	if e := cat.Tool("ui.inspect"); e.Denial == nil || e.Denial.Code != wire.CodeNotExecutable {
		t.Errorf("runtime.executable:false: %+v", e.Denial)
	}
	if cat.EvaluatedAt.IsZero() {
		t.Error("evaluatedAtUtc not read")
	}
}

func TestDescribeFetchesOneDefinition(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, threeTools()...)
	hs := newHarness(t, Options{MaxToolPolicy: wire.PolicyCritical}, app.handler())
	e, err := hs.c.Describe(t.Context(), "b.write")
	if err != nil {
		t.Fatal(err)
	}
	if e.ID != "b.write" || len(e.ArgumentsSchema) == 0 || len(e.ResultSchema) == 0 {
		t.Fatalf("entry %+v", e)
	}
	if got, want := detailsOf(app.queryLog()), []string{"index", "definitions b.write"}; !slices.Equal(got, want) {
		t.Fatalf("queries %q, want %q", got, want)
	}
	// Cached now: only the conditional index.
	if _, err := hs.c.Describe(t.Context(), "b.write"); err != nil {
		t.Fatal(err)
	}
	if got, want := detailsOf(app.queryLog()), []string{"index?rev-1/avail-1"}; !slices.Equal(got, want) {
		t.Fatalf("queries %q, want %q", got, want)
	}
	// Catalog then fetches only the two others.
	if _, err := hs.c.Catalog(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got, want := detailsOf(app.queryLog()), []string{"index?rev-1/avail-1", "definitions a.read c.critical"}; !slices.Equal(got, want) {
		t.Fatalf("queries %q, want %q", got, want)
	}
	_, err = hs.c.Describe(t.Context(), "nope")
	if wire.CodeOf(err) != wire.CodeNotFound {
		t.Errorf("unknown id: %v", err)
	}
}

func TestCatalogDefinitionChangedBetweenPhases(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, threeTools()...)
	hs := newHarness(t, Options{MaxToolPolicy: wire.PolicyCritical}, nil)
	raced := false
	hs.setHandler(func(req *wire.Envelope) []msg {
		out := app.handler()(req)
		if !raced && req.Type == wire.TypeQuery && len(app.queries) == 1 {
			// Right after answering the first index, the app changes a definition.
			raced = true
			app.set(func(a *fakeApp) { a.revision = "rev-2"; a.tools[0].DefinitionRevision = "def-a-2" })
		}
		return out
	})
	cat, err := hs.c.Catalog(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if e := cat.Tool("a.read"); e.DefinitionRevision != "def-a-2" || len(e.ArgumentsSchema) == 0 {
		t.Errorf("a.read %+v", e)
	}
	if got, want := detailsOf(app.queryLog()), []string{"index", "definitions a.read b.write c.critical", "index?rev-1/avail-1", "definitions a.read"}; !slices.Equal(got, want) {
		t.Fatalf("queries %q, want %q", got, want)
	}
}

func TestCatalogDiscoveryDisabledClearsCache(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, threeTools()...)
	hs := newHarness(t, Options{}, nil)
	disabled := false
	hs.setHandler(func(req *wire.Envelope) []msg {
		if disabled && req.Type == wire.TypeQuery {
			return []msg{reply(t, req, wire.TypeError, wire.NewError(wire.CodeDiscoveryDisabled, "off"))}
		}
		return app.handler()(req)
	})
	if _, err := hs.c.Catalog(t.Context()); err != nil {
		t.Fatal(err)
	}
	disabled = true // the handler runs after this write is visible: Catalog returned
	if _, err := hs.c.Catalog(t.Context()); wire.CodeOf(err) != wire.CodeDiscoveryDisabled {
		t.Fatalf("err = %v", err)
	}
	if hs.c.cachedCatalog() != nil {
		t.Error("cache kept after discovery was disabled")
	}
	_, err := hs.c.Call(t.Context(), wire.Call{ToolID: "a.read"})
	if wire.CodeOf(err) != wire.CodeDiscoveryDisabled {
		t.Fatalf("call err = %v", err)
	}
	if app.callCount() != 0 {
		t.Error("a call was sent without a catalog")
	}
}

func TestCatalogUnexpectedUnchanged(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t)
	app.rawCatalog = `{"schema":"ansight.tool-catalog.v3","revision":"r","unchanged":true}`
	hs := newHarness(t, Options{}, app.handler())
	_, err := hs.c.Catalog(t.Context())
	if !errors.Is(err, ErrProtocol) {
		t.Fatalf("err = %v", err)
	}
}

func TestQueryIsRaw(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, threeTools()...)
	hs := newHarness(t, Options{}, app.handler())
	cat, err := hs.c.Query(t.Context(), wire.Query{Detail: wire.DetailFull, IDs: []string{"c.critical"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.Tools) != 1 || cat.Tools[0].Denial != nil {
		t.Errorf("raw query annotated or filtered wrongly: %+v", cat.Tools)
	}
	if hs.c.cachedCatalog() != nil {
		t.Error("Query filled the cache")
	}
}

func TestIndexFetchesNoDefinitions(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, threeTools()...)
	hs := newHarness(t, Options{MaxToolPolicy: wire.PolicyCritical}, app.handler())
	if hs.c.Cached() != nil {
		t.Fatal("cached catalog before any query")
	}
	cat, err := hs.c.Index(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := detailsOf(app.queryLog()); !slices.Equal(got, []string{"index"}) {
		t.Fatalf("queries %q", got)
	}
	if len(cat.Tools) != 3 || len(cat.Tool("a.read").ArgumentsSchema) != 0 {
		t.Errorf("index %+v", cat.Tools)
	}
	if hs.c.Cached() != cat {
		t.Error("Cached does not return the last catalog")
	}
	if _, err := hs.c.Describe(t.Context(), "a.read"); err != nil {
		t.Fatal(err)
	}
	cat, err = hs.c.Index(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.Tool("a.read").ArgumentsSchema) == 0 || len(cat.Tool("b.write").ArgumentsSchema) != 0 {
		t.Error("Index should carry exactly the cached definitions")
	}
}
