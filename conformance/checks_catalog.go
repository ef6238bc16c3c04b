package conformance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ansight-go/ansight/wire"
)

var catalogChecks = []check{
	{"catalog.full", "tool.query with no payload members answers the full catalog: schema v3, revision, tools sorted by id, count, availabilityRevision, evaluatedAtUtc in UTC, totalCount, categories; full entries with schemas (docs/protocol/catalog.md#full-payload)", checkCatalogFull},
	{"catalog.index", "detail index answers entries without schemas or argumentEncoding, detail:\"index\", the same tools as full (docs/protocol/catalog.md#index-entry)", checkCatalogIndex},
	{"catalog.definitions", "detail definitions answers static definitions only: no runtime, executable, availabilityRevision, evaluatedAtUtc, totalCount or categories (docs/protocol/catalog.md#definitions-entry)", checkCatalogDefinitions},
	{"catalog.unknown_detail", "an unknown detail value is treated as full (docs/protocol/catalog.md#query)", checkCatalogUnknownDetail},
	{"catalog.non_object_payload", "a query payload that is absent, null or not an object is treated as {} (docs/protocol/catalog.md#query)", checkCatalogNonObject},
	{"catalog.omitted_defaults", "defaults are omitted: no executable:true, no available runtime, no argumentEncoding:\"json\", no additionalProperties:false, no unchanged:false, no detail:\"full\", no empty keywords or prerequisiteToolIds (docs/protocol/catalog.md#defaults)", checkCatalogDefaults},
	{"catalog.definition_revisions", "definitionRevision and revision are the same in the index, definitions and full projections (docs/protocol/catalog.md#definition-revision)", checkCatalogDefinitionRevisions},
	{"catalog.revision_stable", "repeated queries give the same revision, and the same availabilityRevision while availability is the same (docs/protocol/catalog.md#revisions)", checkCatalogRevisionStable},
	{"catalog.unchanged", "matching ifRevision (and ifAvailabilityRevision) answers exactly {schema, revision, unchanged:true}, whatever the filters (docs/protocol/catalog.md#answer-forms)", checkCatalogUnchanged},
	{"catalog.definitions_never_short", "detail definitions is answered in full even when ifRevision matches (docs/protocol/catalog.md#answer-forms)", checkCatalogDefinitionsNeverShort},
	{"catalog.stale_revision", "a stale or absent ifRevision gets the full catalog (docs/protocol/catalog.md#answer-forms)", checkCatalogStale},
	{"catalog.availability_changes", "matching ifRevision with a different ifAvailabilityRevision answers {schema, revision, unchanged:true, availabilityRevision, evaluatedAtUtc, changes} with changes = every unavailable tool's runtime (docs/protocol/catalog.md#changes)", checkCatalogAvailabilityChanges},
	{"catalog.availability_toggle", "when availability changes, availabilityRevision and changes follow and revision stays (docs/protocol/catalog.md#availability-revision; needs Scenario.ToggleAvailability)", checkCatalogAvailabilityToggle},
	{"catalog.filter_ids", "ids selects exact, case-sensitive tool ids, answered in id order (docs/protocol/catalog.md#filters)", checkFilterIDs},
	{"catalog.filter_policy", "policy selects the tools of one policy, case-insensitively (docs/protocol/catalog.md#filters)", checkFilterPolicy},
	{"catalog.filter_executable_only", "executableOnly selects the tools executable now (docs/protocol/catalog.md#filters)", checkFilterExecutableOnly},
	{"catalog.filter_text", "query and feature: lower-cased, split on non-letters/digits, every term a substring of the searchable text, AND-ed (docs/protocol/catalog.md#search-text)", checkFilterText},
	{"catalog.limit", "limit (alias maxResults) is clamped to 1..1000: 0 and negative give 1, 1001 gives up to 1000 (docs/protocol/catalog.md#query)", checkLimit},
	{"catalog.filter_order", "filters apply in the order ids → policy → executableOnly → text → limit (docs/protocol/catalog.md#filters)", checkFilterOrder},
	{"catalog.totals_ignore_filters", "revision, availabilityRevision, totalCount and categories describe all visible tools whatever the filters (docs/protocol/catalog.md#filters)", checkTotalsIgnoreFilters},
}

// js encodes v as compact JSON for a request payload.
func js(v any) string {
	b, err := wire.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// catalog returns the app's catalog, reading it if no check did yet. A catalog that
// breaks the rules (catalog.full says how) is still used, as well as it can be read.
func (c *cx) catalog() *catalogView {
	if c.r.cat == nil {
		p := c.query(`{}`)
		c.r.full, c.r.cat = p, readCatalog(p)
	}
	return c.r.cat
}

// complete skips the check when the catalog lists fewer tools than are visible (more
// than the 1000 one query returns): expectations are computed from the listed tools.
func (c *cx) complete(v *catalogView) {
	if v.totalCount > len(v.tools) {
		c.skipf("the app has %d visible tools, more than one catalog lists; expected filter results cannot be computed", v.totalCount)
	}
}

// index queries the index with extra payload members.
func (c *cx) index(extra map[string]any) map[string]any {
	q := map[string]any{"detail": wire.DetailIndex}
	for k, v := range extra {
		q[k] = v
	}
	return c.query(js(q))
}

func checkCatalogFull(c *cx) {
	p := c.query(`{}`)
	c.problems("a full catalog (docs/protocol/catalog.md#full-payload)", catalogProblems(p, wire.DetailFull))
	c.r.full, c.r.cat = p, readCatalog(p)
}

func checkCatalogIndex(c *cx) {
	v := c.catalog()
	p := c.index(nil)
	c.problems("an index catalog (docs/protocol/catalog.md#index-entry)", catalogProblems(p, wire.DetailIndex))
	c.r.index = p
	if got, want := ids(p), ids(c.r.full); !slices.Equal(got, want) {
		c.expectf("the same tools as the full catalog", "index lists %v, full lists %v", got, want)
	}
	for _, e := range entries(p) {
		id, _ := e["id"].(string)
		if t := v.byID[id]; t != nil && (e["executable"] == false) != !t.executable {
			c.expectf("the same executable state as the full catalog", "%s: executable differs between index and full", id)
		}
	}
}

func checkCatalogDefinitions(c *cx) {
	c.catalog()
	p := c.query(`{"detail":"definitions"}`)
	c.problems("a definitions catalog (docs/protocol/catalog.md#definitions-entry)", catalogProblems(p, wire.DetailDefinitions))
	c.r.definitions = p
	if got, want := ids(p), ids(c.r.full); !slices.Equal(got, want) {
		c.expectf("the same tools as the full catalog", "definitions lists %v, full lists %v", got, want)
	}
}

func checkCatalogUnknownDetail(c *cx) {
	p := c.query(`{"detail":"conformance-unknown-detail"}`)
	c.problems("the full catalog (docs/protocol/catalog.md#query: unknown detail ⇒ full)", catalogProblems(p, wire.DetailFull))
}

func checkCatalogNonObject(c *cx) {
	for _, payload := range []string{"", "null", "[1,2]", `"index"`, "42"} {
		p := c.query(payload)
		c.problems(fmt.Sprintf("the full catalog for payload %q (docs/protocol/catalog.md#query: a non-object payload is treated as {})", payload),
			catalogProblems(p, wire.DetailFull))
	}
}

func checkCatalogDefaults(c *cx) {
	c.catalog()
	if c.r.index == nil {
		c.r.index = c.index(nil)
	}
	if c.r.definitions == nil {
		c.r.definitions = c.query(`{"detail":"definitions"}`)
	}
	var list []string
	for _, k := range []struct {
		name string
		p    map[string]any
	}{{"index", c.r.index}, {"definitions", c.r.definitions}, {"full", c.r.full}} {
		list = append(list, defaultProblems(k.p, k.name)...)
	}
	c.problems("defaults omitted on the wire (docs/protocol/catalog.md#defaults \"Defaults are omitted\")", list)
}

// defaultProblems lists defaults written out in a catalog payload.
func defaultProblems(p map[string]any, name string) []string {
	var list []string
	bad := func(format string, args ...any) { list = append(list, name+": "+fmt.Sprintf(format, args...)) }
	if p["unchanged"] == false {
		bad("unchanged:false")
	}
	if p["detail"] == wire.DetailFull {
		bad(`detail:"full"`)
	}
	for _, e := range entries(p) {
		id, _ := e["id"].(string)
		if e["executable"] == true {
			bad("%s: executable:true", id)
		}
		if rt, ok := e["runtime"].(map[string]any); ok {
			if rt["available"] == true {
				bad("%s: runtime of an available tool", id)
			}
			if rt["retryable"] == false {
				bad("%s: runtime.retryable:false", id)
			}
		}
		if e["argumentEncoding"] == wire.ArgumentEncodingJSON {
			bad(`%s: argumentEncoding:"json"`, id)
		}
		if e["keywords"] == "" {
			bad(`%s: keywords:""`, id)
		}
		if l, ok := e["prerequisiteToolIds"].([]any); ok && len(l) == 0 {
			bad("%s: prerequisiteToolIds:[]", id)
		}
		for _, k := range []string{"argumentsSchema", "resultSchema"} {
			for _, at := range closedMarkers(e[k], k) {
				bad("%s: additionalProperties:false at %s", id, at)
			}
		}
	}
	return list
}

// closedMarkers returns the paths of additionalProperties:false in a schema.
func closedMarkers(v any, at string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for _, k := range keysOf(v) {
			if k == "additionalProperties" && v[k] == false {
				out = append(out, at)
			}
			out = append(out, closedMarkers(v[k], at+"."+k)...)
		}
	case []any:
		for i, x := range v {
			out = append(out, closedMarkers(x, fmt.Sprintf("%s[%d]", at, i))...)
		}
	}
	return out
}

func checkCatalogDefinitionRevisions(c *cx) {
	c.catalog()
	index := c.index(nil)
	defs := c.query(`{"detail":"definitions"}`)
	full := c.query(`{}`)
	if index["revision"] != defs["revision"] || index["revision"] != full["revision"] {
		c.expectf("one revision for all projections", "index %v, definitions %v, full %v", index["revision"], defs["revision"], full["revision"])
	}
	revs := func(p map[string]any) map[string]any {
		m := map[string]any{}
		for _, e := range entries(p) {
			id, _ := e["id"].(string)
			m[id] = e["definitionRevision"]
		}
		return m
	}
	ri, rd, rf := revs(index), revs(defs), revs(full)
	var list []string
	for _, id := range keysOf(rf) {
		if ri[id] != rf[id] || rd[id] != rf[id] {
			list = append(list, fmt.Sprintf("%s: index %v, definitions %v, full %v", id, ri[id], rd[id], rf[id]))
		}
	}
	c.problems("one definitionRevision per tool in every projection (docs/protocol/catalog.md#definition-revision)", list)
}

func checkCatalogRevisionStable(c *cx) {
	var prev map[string]any
	for i := range 3 {
		p := c.index(nil)
		if prev != nil {
			if p["revision"] != prev["revision"] {
				c.expectf("the same revision while nothing changes (docs/protocol/catalog.md#catalog-revision: runtime state never changes it)",
					"query %d gave revision %v, the one before %v", i+1, p["revision"], prev["revision"])
			}
			if equalJSON(anyMap(unavailable(p)), anyMap(unavailable(prev))) && p["availabilityRevision"] != prev["availabilityRevision"] {
				c.expectf("the same availabilityRevision while availability is the same (docs/protocol/catalog.md#availability-revision)",
					"query %d gave availabilityRevision %v, the one before %v", i+1, p["availabilityRevision"], prev["availabilityRevision"])
			}
		}
		prev = p
	}
}

func anyMap(m map[string]map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// wantUnchanged fails unless p is exactly the three-key unchanged form for revision.
func (c *cx) wantUnchanged(resp *response, p map[string]any, revision any) {
	if got := keysOf(p); !slices.Equal(got, []string{"revision", "schema", "unchanged"}) {
		c.expectf(`exactly {"schema","revision","unchanged":true}`, "the answer has members %v", got)
	}
	if p["unchanged"] != true || p["revision"] != revision || p["schema"] != wire.CatalogSchema {
		c.expectf(`{"schema":"`+wire.CatalogSchema+`","revision":<the matching revision>,"unchanged":true}`,
			"got schema %v, revision %v, unchanged %v", p["schema"], p["revision"], p["unchanged"])
	}
	if resp.wrapped {
		c.expectf("a short form is never compressed (docs/protocol/messages.md#encoding-a-payload)", "the unchanged answer was compressed")
	}
}

func checkCatalogUnchanged(c *cx) {
	v := c.catalog()
	base := c.index(nil)
	rev, avail := base["revision"], base["availabilityRevision"]
	first := ""
	if len(v.tools) > 0 {
		first = v.tools[0].id
	}
	for _, q := range []map[string]any{
		{"detail": "index", "ifRevision": rev, "ifAvailabilityRevision": avail},
		{"ifRevision": rev},
		{"detail": "full", "ifRevision": rev, "ifAvailabilityRevision": avail},
		{"detail": "index", "ifRevision": rev, "ifAvailabilityRevision": avail, "ids": []string{first, "conformance.absent"}, "policy": "read", "limit": 1, "query": "zz"},
	} {
		resp := c.exchange(wire.TypeQuery, js(q))
		c.wantUnchanged(resp, c.want(resp, wire.TypeCatalog), rev)
	}
}

func checkCatalogDefinitionsNeverShort(c *cx) {
	v := c.catalog()
	base := c.index(nil)
	p := c.query(js(map[string]any{"detail": "definitions", "ifRevision": base["revision"], "ifAvailabilityRevision": base["availabilityRevision"]}))
	c.problems("the full definitions catalog (docs/protocol/catalog.md#answer-forms: definitions are never short-circuited)", catalogProblems(p, wire.DetailDefinitions))
	if n := len(entries(p)); n != len(v.tools) {
		c.expectf("every tool's definition", "%d definitions for %d tools", n, len(v.tools))
	}
}

func checkCatalogStale(c *cx) {
	base := c.index(nil)
	for _, q := range []map[string]any{
		{"detail": "index", "ifRevision": "sha256:0000000000000000000000000000000000000000000000000000000000000000", "ifAvailabilityRevision": base["availabilityRevision"]},
		{"detail": "index", "ifAvailabilityRevision": base["availabilityRevision"]},
	} {
		p := c.query(js(q))
		c.problems("the full index catalog (docs/protocol/catalog.md#index-entry)", catalogProblems(p, wire.DetailIndex))
	}
}

// wantChanges fails unless p is the availability-only form; it returns changes.
func (c *cx) wantChanges(resp *response, p map[string]any, revision any) map[string]any {
	want := []string{"availabilityRevision", "changes", "evaluatedAtUtc", "revision", "schema", "unchanged"}
	if got := keysOf(p); !slices.Equal(got, want) {
		c.expectf(`exactly {"schema","revision","unchanged":true,"availabilityRevision","evaluatedAtUtc","changes"}`, "the answer has members %v", got)
	}
	if p["unchanged"] != true || p["revision"] != revision || p["schema"] != wire.CatalogSchema {
		c.expectf("schema v3, the matching revision, unchanged:true", "got schema %v, revision %v, unchanged %v", p["schema"], p["revision"], p["unchanged"])
	}
	if s, _ := p["availabilityRevision"].(string); s == "" {
		c.expectf("a non-empty availabilityRevision", "got %s", describe(p["availabilityRevision"]))
	}
	c.problems("evaluatedAtUtc in RFC 3339 UTC", timestampProblems("evaluatedAtUtc", p["evaluatedAtUtc"]))
	changes, ok := p["changes"].(map[string]any)
	if !ok {
		c.expectf("changes as an object keyed by tool id", "changes is %s", describe(p["changes"]))
	}
	var list []string
	for _, id := range keysOf(changes) {
		rt, ok := changes[id].(map[string]any)
		if !ok {
			list = append(list, fmt.Sprintf("changes[%q] is %s", id, describe(changes[id])))
			continue
		}
		list = append(list, runtimeProblems(rt, "changes["+id+"]")...)
		if rt["available"] != false {
			list = append(list, fmt.Sprintf("changes[%q] lists an available tool", id))
		}
		if _, ok := rt["executable"]; ok {
			c.notef("changes carry executable inside runtime objects (a variant hosts accept, docs/protocol/compatibility.md#tolerated-variants)")
		}
	}
	c.problems("changes: the runtime object of every unavailable tool (docs/protocol/catalog.md#changes)", list)
	return changes
}

// sameChanges fails unless changes lists exactly the unavailable tools of index.
func (c *cx) sameChanges(changes map[string]any, index map[string]any) {
	want := unavailable(index)
	if got := keysOf(changes); !slices.Equal(got, keysOf(want)) {
		c.expectf("changes = a replacement snapshot of the unavailable tools (docs/protocol/catalog.md#changes)", "changes lists %v; the index shows %v unavailable", got, keysOf(want))
	}
	for id, rt := range want {
		if got, _ := changes[id].(map[string]any); !sameRuntime(got, rt) {
			c.expectf("the same runtime object as the index", "changes[%q] = %v, the index has %v", id, got, rt)
		}
	}
}

func checkCatalogAvailabilityChanges(c *cx) {
	for attempt := 0; ; attempt++ {
		base := c.index(nil)
		resp := c.exchange(wire.TypeQuery, js(map[string]any{"detail": "index", "ifRevision": base["revision"], "ifAvailabilityRevision": "sha256:conformance-stale"}))
		changes := c.wantChanges(resp, c.want(resp, wire.TypeCatalog), base["revision"])
		after := c.index(nil)
		if !equalJSON(anyMap(unavailable(base)), anyMap(unavailable(after))) && attempt == 0 {
			continue // availability moved while we looked: look again
		}
		c.sameChanges(changes, after)
		if p := resp.obj(); p["availabilityRevision"] != after["availabilityRevision"] {
			c.expectf("the current availabilityRevision", "changes form %v, index %v", p["availabilityRevision"], after["availabilityRevision"])
		}
		return
	}
}

func checkCatalogAvailabilityToggle(c *cx) {
	sc := c.r.opts.Scenario
	if len(sc.ToggleAvailability) == 0 {
		c.skipf("no scenario changes availability (Options.Scenario.ToggleAvailability); it cannot be provoked generically")
	}
	before := c.index(nil)
	rev, avail := before["revision"], before["availabilityRevision"]
	defer c.restore(sc.RestoreAvailability)
	for _, call := range sc.ToggleAvailability {
		c.callOK(call)
	}
	resp := c.exchange(wire.TypeQuery, js(map[string]any{"detail": "index", "ifRevision": rev, "ifAvailabilityRevision": avail}))
	changes := c.wantChanges(resp, c.want(resp, wire.TypeCatalog), rev)
	toggled := resp.obj()["availabilityRevision"]
	if toggled == avail {
		c.expectf("a new availabilityRevision after availability changed", "availabilityRevision stayed %v", avail)
	}
	now := c.index(nil)
	if now["revision"] != rev {
		c.expectf("the same revision: runtime state never changes it (docs/protocol/catalog.md#catalog-revision)", "revision changed from %v to %v", rev, now["revision"])
	}
	c.sameChanges(changes, now)
	if equalJSON(anyMap(unavailable(now)), anyMap(unavailable(before))) {
		c.failf("the scenario's ToggleAvailability calls changed no tool's availability")
	}
	if len(sc.RestoreAvailability) == 0 {
		return
	}
	for _, call := range sc.RestoreAvailability {
		c.callOK(call)
	}
	resp = c.exchange(wire.TypeQuery, js(map[string]any{"detail": "index", "ifRevision": rev, "ifAvailabilityRevision": toggled}))
	changes = c.wantChanges(resp, c.want(resp, wire.TypeCatalog), rev)
	c.sameChanges(changes, c.index(nil))
	if got := resp.obj()["availabilityRevision"]; got != avail {
		c.expectf("the original availabilityRevision once availability is back (docs/protocol/catalog.md#availability-revision: a hash of the runtime state)", "got %v, was %v", got, avail)
	}
}

// restore runs calls without failing the check (it may already have failed).
func (c *cx) restore(calls []wire.Call) {
	for _, call := range calls {
		c.r.callQuietly(c.ctx, call)
	}
}

// wantIDs fails unless the catalog lists exactly want, in order.
func (c *cx) wantIDs(p map[string]any, want []string, what string) {
	got := ids(p)
	if !slices.Equal(got, want) {
		c.expectf(what, "listed %v, want %v", got, want)
	}
	if n, _ := p["count"].(float64); int(n) != len(got) {
		c.expectf("count = the number of listed tools", "count %v for %d tools", p["count"], len(got))
	}
}

// visible returns the ids of the tools keep accepts, in id order, at most 1000.
func visible(v *catalogView, keep func(*toolView) bool) []string {
	out := []string{}
	for _, t := range v.tools {
		if keep(t) && len(out) < wire.MaxQueryLimit {
			out = append(out, t.id)
		}
	}
	return out
}

func checkFilterIDs(c *cx) {
	v := c.catalog()
	if len(v.tools) == 0 {
		c.skipf("the app publishes no tools")
	}
	first, last := v.tools[0].id, v.tools[len(v.tools)-1].id
	p := c.index(map[string]any{"ids": []string{last, "conformance.absent.tool", first, last}})
	c.wantIDs(p, slices.Compact([]string{first, last}), "the listed ids that exist, in id order")
	variant := strings.ToUpper(first)
	if variant == first {
		variant = strings.ToLower(first)
	}
	if variant != first && v.byID[variant] == nil {
		p = c.index(map[string]any{"ids": []string{variant}})
		c.wantIDs(p, []string{}, "no tool: ids match case-sensitively (docs/protocol/catalog.md#filters)")
	}
}

func checkFilterPolicy(c *cx) {
	v := c.catalog()
	c.complete(v)
	for _, pol := range []wire.Policy{wire.PolicyRead, wire.PolicyWrite, wire.PolicyCritical} {
		want := visible(v, func(t *toolView) bool { return t.policy == pol })
		name := string(pol)
		if len(want) > 0 {
			name = strings.ToUpper(name) // case-insensitive
		}
		p := c.index(map[string]any{"policy": name})
		c.wantIDs(p, want, "the visible tools of policy "+string(pol))
	}
}

func checkFilterExecutableOnly(c *cx) {
	v := c.catalog()
	c.complete(v)
	p := c.index(map[string]any{"executableOnly": true})
	c.wantIDs(p, visible(v, func(t *toolView) bool { return t.executable }), "the tools executable now")
}

func checkFilterText(c *cx) {
	v := c.catalog()
	c.complete(v)
	var words []string
	for _, t := range v.tools {
		for _, w := range terms(t.name + " " + t.category) {
			if len(w) >= 4 && !slices.Contains(words, w) {
				words = append(words, w)
			}
		}
	}
	if len(words) == 0 {
		c.skipf("no tool has a name or category word to search for")
	}
	match := func(q ...string) []string {
		var ts []string
		for _, s := range q {
			ts = append(ts, terms(s)...)
		}
		return visible(v, func(t *toolView) bool {
			text := t.searchable()
			for _, term := range ts {
				if !strings.Contains(text, term) {
					return false
				}
			}
			return true
		})
	}
	a := words[0]
	b := words[len(words)/2]
	cases := []struct {
		q    map[string]any
		want []string
	}{
		{map[string]any{"query": strings.ToUpper(a)}, match(a)},
		{map[string]any{"query": a[:len(a)-1]}, match(a[:len(a)-1])}, // substring
		{map[string]any{"query": a + "-" + b}, match(a, b)},
		{map[string]any{"query": a, "feature": b}, match(a, b)},
		{map[string]any{"feature": b}, match(b)},
		{map[string]any{"query": "zzconformancezz"}, []string{}},
	}
	for _, k := range cases {
		p := c.index(k.q)
		c.wantIDs(p, k.want, "the tools whose searchable text holds every term of "+js(k.q))
	}
}

func checkLimit(c *cx) {
	v := c.catalog()
	if len(v.tools) < 2 {
		c.skipf("the app publishes fewer than two tools")
	}
	all := visible(v, func(*toolView) bool { return true })
	cases := []struct {
		q    map[string]any
		want []string
	}{
		{map[string]any{"limit": 1}, all[:1]},
		{map[string]any{"limit": 0}, all[:1]},
		{map[string]any{"limit": -5}, all[:1]},
		{map[string]any{"limit": 2}, all[:2]},
		{map[string]any{"maxResults": 1}, all[:1]},
		{map[string]any{"limit": 1001}, all},
	}
	for _, k := range cases {
		p := c.index(k.q)
		c.wantIDs(p, k.want, "limit clamped to 1..1000 for "+js(k.q))
	}
}

func checkFilterOrder(c *cx) {
	v := c.catalog()
	c.complete(v)
	if len(v.tools) < 3 {
		c.skipf("the app publishes fewer than three tools")
	}
	pick := []string{v.tools[len(v.tools)-1].id, v.tools[len(v.tools)/2].id, v.tools[0].id}
	pol := v.byID[pick[1]].policy
	want := visible(v, func(t *toolView) bool { return slices.Contains(pick, t.id) && t.policy == pol })[:1]
	p := c.index(map[string]any{"ids": pick, "policy": string(pol), "limit": 1})
	c.wantIDs(p, want, "ids, then policy, then limit")
	want = visible(v, func(t *toolView) bool { return slices.Contains(pick, t.id) && t.executable })
	p = c.index(map[string]any{"ids": pick, "executableOnly": true})
	c.wantIDs(p, want, "ids, then executableOnly")
}

func checkTotalsIgnoreFilters(c *cx) {
	v := c.catalog()
	base := c.index(nil)
	first := "conformance.absent"
	if len(v.tools) > 0 {
		first = v.tools[0].id
	}
	for _, q := range []map[string]any{
		{"ids": []string{first}},
		{"policy": "critical"},
		{"executableOnly": true},
		{"query": "zzconformancezz"},
		{"limit": 1},
	} {
		p := c.index(q)
		for _, k := range []string{"revision", "availabilityRevision", "totalCount", "categories"} {
			if !equalJSON(p[k], base[k]) {
				c.expectf(k+" over all visible tools, whatever the filters (docs/protocol/catalog.md#filters)", "with %s, %s is %v; unfiltered it is %v", js(q), k, p[k], base[k])
			}
		}
	}
}
