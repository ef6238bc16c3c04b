package tools

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/schema"
	"github.com/ansight-go/ansight/wire"
)

// Catalog is an annotated snapshot of the app's tool catalog as this client sees it: the
// app's index, the definitions fetched so far, and the host's verdict per tool. Entries
// above the session grant, or not executable, have Executable set to false and a Denial
// saying why (tool_policy_not_granted, tool_not_executable, or the app's runtime code).
// A Catalog is immutable; do not modify it.
type Catalog struct {
	// Revision and AvailabilityRevision are the app's revisions, opaque strings.
	Revision             string
	AvailabilityRevision string
	// EvaluatedAt is when the app evaluated availability (zero when it did not say).
	EvaluatedAt time.Time
	// Categories counts the visible tools per category, as the app reported.
	Categories map[string]int
	// Tools in the app's order (sorted by id). Schemas are present when the definition has
	// been fetched (always after Client.Catalog; after Client.Describe for that tool).
	Tools []wire.ToolEntry

	byID map[string]int
}

// Tool returns the entry with the exact id, or nil.
func (c *Catalog) Tool(id string) *wire.ToolEntry {
	if c == nil {
		return nil
	}
	if i, ok := c.byID[id]; ok {
		return &c.Tools[i]
	}
	return nil
}

// catalogCache is the client's cached catalog. Refreshes are serialized by sem; readers
// take the current state under mu.
type catalogCache struct {
	sem   chan struct{}
	mu    sync.Mutex
	state *catalogState
}

func (cc *catalogCache) load() *catalogState {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.state
}

func (cc *catalogCache) store(st *catalogState) {
	cc.mu.Lock()
	cc.state = st
	cc.mu.Unlock()
}

// catalogState is one immutable version of the cache.
type catalogState struct {
	revision             string
	availabilityRevision string
	evaluatedAt          time.Time
	categories           map[string]int
	tools                []cachedTool
	byID                 map[string]int
	snap                 *Catalog // built by seal
	// hinted is each tool's hint:duration (0 without one), in snap.Tools' order: parsed
	// once by seal, not from the keywords on every call (callAsk).
	hinted []time.Duration
}

// cachedTool is one tool of the index, its definition when fetched, and what the app said
// about its executability.
type cachedTool struct {
	entry wire.ToolEntry  // index fields only: no schemas, runtime, executable or denial
	def   *wire.ToolEntry // definition for entry.DefinitionRevision, nil when not fetched
	// schemaRefused says why def's schemas were dropped at intake ("" when kept).
	schemaRefused string
	runtime       *wire.Runtime // nil: available
	// notExecutable: the app listed the tool as not executable while available (its guard
	// forbids execution), or wrote executable:false inside runtime (Swift SDK).
	notExecutable  bool
	runtimeNotExec bool
}

// want selects the definitions a refresh must fetch.
type want struct {
	all bool
	ids []string
}

// maxRefreshRounds bounds the index/definitions rounds of one refresh when the catalog
// changes between the two phases.
const maxRefreshRounds = 3

// Query sends one tool.query and returns the app's catalog payload as is: no cache, no
// annotation. A tool.error (tool_discovery_disabled) comes back as a *wire.Error. The
// catalog may share its tools with earlier and later answers (an answer the app repeats
// is not decoded again): do not modify it.
func (c *Client) Query(ctx context.Context, q wire.Query) (*wire.Catalog, error) {
	r, err := c.roundTrip(ctx, wire.TypeQuery, q, c.defaultLimit(ctx), querySubject)
	if err != nil {
		return nil, err
	}
	return r.catalog, nil
}

// Catalog refreshes the cache and returns the annotated catalog with every definition.
// Phase one asks for the index with the cached revisions (ifRevision,
// ifAvailabilityRevision), so an unchanged catalog costs a three-key answer and an
// availability change a small replacement snapshot; phase two fetches definitions only for
// tools whose definitionRevision is not cached. Catalogs without "detail" (pre-v3 SDKs) are
// taken as full definitions and need no second phase.
func (c *Client) Catalog(ctx context.Context) (*Catalog, error) {
	st, err := c.refresh(ctx, want{all: true})
	if err != nil {
		return nil, err
	}
	return st.snap, nil
}

// Describe returns one tool's annotated definition (with schemas), refreshing the index and
// fetching only this definition when it is not cached. An id the app does not list gives a
// *wire.Error with code tool_not_found.
func (c *Client) Describe(ctx context.Context, id string) (*wire.ToolEntry, error) {
	st, err := c.refresh(ctx, want{ids: []string{id}})
	if err != nil {
		return nil, err
	}
	i, ok := st.byID[id]
	if !ok || st.tools[i].def == nil {
		return nil, wire.NewError(wire.CodeNotFound, "the app's catalog (revision %s) does not list tool %q", st.revision, id)
	}
	e := st.snap.Tools[i]
	return &e, nil
}

// cachedCatalog returns the last catalog, or nil when none was fetched.
func (c *Client) cachedCatalog() *Catalog {
	if st := c.catalogs.load(); st != nil {
		return st.snap
	}
	return nil
}

// refresh brings the cache up to date and fetches the wanted definitions that are missing.
func (c *Client) refresh(ctx context.Context, w want) (*catalogState, error) {
	select {
	case c.catalogs.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, &TransportError{Op: wire.TypeQuery, Err: context.Cause(ctx)}
	case <-c.closed:
		return nil, &TransportError{Op: wire.TypeQuery, Err: c.closedErr()}
	}
	defer func() { <-c.catalogs.sem }()

	st := c.catalogs.load()
	for round := 0; ; round++ {
		next, err := c.fetchIndex(ctx, st)
		if err != nil {
			if wire.CodeOf(err) == wire.CodeDiscoveryDisabled {
				c.catalogs.store(nil) // nothing may be called any more
			}
			return nil, err
		}
		st = next
		ids := st.missing(w)
		if len(ids) > 0 {
			if st, err = c.fetchDefinitions(ctx, st, ids); err != nil {
				return nil, err
			}
		}
		// Definitions that did not match the index mean the catalog changed in between:
		// look at the index again, a bounded number of times.
		if st.snap == nil {
			st.seal(c.opts.MaxToolPolicy)
		}
		c.catalogs.store(st)
		if len(st.missing(w)) == 0 || round+1 == maxRefreshRounds {
			return st, nil
		}
	}
}

// fetchIndex runs phase one against the cached state old (nil when none).
func (c *Client) fetchIndex(ctx context.Context, old *catalogState) (*catalogState, error) {
	q := wire.Query{Detail: wire.DetailIndex}
	if old != nil && old.revision != "" {
		q.IfRevision, q.IfAvailabilityRevision = old.revision, old.availabilityRevision
	}
	for attempt := 0; ; attempt++ {
		r, err := c.roundTrip(ctx, wire.TypeQuery, q, c.defaultLimit(ctx), querySubject)
		if err != nil {
			return nil, err
		}
		cat := r.catalog
		flags := readRuntimeFlags(r.catalogJSON())
		if !cat.Unchanged {
			return newState(cat, old, flags), nil
		}
		if q.IfRevision != "" && cat.Revision == old.revision {
			if cat.AvailabilityRevision == "" {
				return old, nil // exactly {schema, revision, unchanged}
			}
			return old.withChanges(cat, flags), nil
		}
		// "unchanged" although we held nothing, or for another revision: ask again, once,
		// without conditions.
		if attempt > 0 {
			return nil, &TransportError{Op: wire.TypeQuery, Err: protocolError("unconditional tool.query answered unchanged", nil)}
		}
		q = wire.Query{Detail: wire.DetailIndex}
	}
}

// fetchDefinitions runs phase two for ids and returns a new state holding them.
func (c *Client) fetchDefinitions(ctx context.Context, st *catalogState, ids []string) (*catalogState, error) {
	next := st.clone()
	for chunk := range slices.Chunk(ids, wire.MaxQueryLimit) {
		r, err := c.roundTrip(ctx, wire.TypeQuery, wire.Query{Detail: wire.DetailDefinitions, IDs: chunk}, c.defaultLimit(ctx), querySubject)
		if err != nil {
			return nil, err
		}
		for _, e := range r.catalog.Tools {
			i, ok := next.byID[e.ID]
			if !ok {
				continue
			}
			ct := &next.tools[i]
			if ct.entry.DefinitionRevision != "" && e.DefinitionRevision != ct.entry.DefinitionRevision {
				continue // changed since the index: the next round looks again
			}
			d := stripAnnotations(e)
			ct.def, ct.schemaRefused = intake(&d)
		}
	}
	return next, nil
}

// intake bounds a definition's schemas as it enters the cache (schema.CheckBounds):
// a schema beyond the bounds is dropped with the definition's other schema, and the reason
// returned.
func intake(d *wire.ToolEntry) (*wire.ToolEntry, string) {
	for _, s := range []struct {
		name string
		raw  []byte
	}{{"argumentsSchema", d.ArgumentsSchema}, {"resultSchema", d.ResultSchema}} {
		if len(s.raw) == 0 {
			continue
		}
		if err := schema.CheckBounds(s.raw); err != nil {
			d.ArgumentsSchema, d.ResultSchema = nil, nil
			return d, fmt.Sprintf("The app's %s for '%s' is refused: %v.", s.name, d.ID, err)
		}
	}
	return d, ""
}

// runtimeFlags reads what the typed catalog drops: executable:false inside runtime objects
// (written by the Swift SDK) in tools and changes.
type runtimeFlags struct {
	Tools []struct {
		Runtime *struct {
			Executable *bool `json:"executable"`
		} `json:"runtime"`
	} `json:"tools"`
	Changes map[string]struct {
		Executable *bool `json:"executable"`
	} `json:"changes"`
}

// catalogJSON returns the catalog payload's JSON as far as the tools go: for a kept answer
// repeated, the kept one's, whose tools and changes are the same (its tail holds only
// tailMembers).
func (r *response) catalogJSON() []byte {
	if r.kept != nil {
		return r.kept.json
	}
	return r.payload
}

// payloadJSON returns the response's payload as JSON: for a kept catalog answer repeated,
// put together from the kept answer's head and this one's tail (a copy: use it where the
// whole JSON is needed, not on every answer).
func (r *response) payloadJSON() []byte {
	if r.kept == nil {
		return r.payload
	}
	n := r.kept.prefix.Len()
	return append(r.kept.json[:n:n], r.tail...)
}

func readRuntimeFlags(payload []byte) *runtimeFlags {
	if !bytes.Contains(payload, []byte(`"executable"`)) {
		return nil
	}
	var f runtimeFlags
	if wire.Unmarshal(payload, &f) != nil {
		return nil
	}
	return &f
}

func (f *runtimeFlags) tool(i int) bool {
	if f == nil || i >= len(f.Tools) || f.Tools[i].Runtime == nil {
		return false
	}
	e := f.Tools[i].Runtime.Executable
	return e != nil && !*e
}

func (f *runtimeFlags) change(id string) bool {
	if f == nil {
		return false
	}
	e := f.Changes[id].Executable
	return e != nil && !*e
}

// newState builds the cache from a full catalog answer, keeping old definitions whose
// definitionRevision is unchanged. A catalog whose detail is not "index" (full, or a pre-v3
// catalog without detail) carries the definitions itself.
func newState(cat *wire.Catalog, old *catalogState, flags *runtimeFlags) *catalogState {
	st := &catalogState{
		revision:             cat.Revision,
		availabilityRevision: cat.AvailabilityRevision,
		evaluatedAt:          cat.EvaluatedAtUtc,
		categories:           cat.Categories,
		tools:                make([]cachedTool, 0, len(cat.Tools)),
		byID:                 make(map[string]int, len(cat.Tools)),
	}
	full := cat.Detail != wire.DetailIndex
	for i, e := range cat.Tools {
		if _, dup := st.byID[e.ID]; dup {
			continue // an app lists each id once; keep the first
		}
		ct := cachedTool{runtime: e.Runtime, runtimeNotExec: flags.tool(i)}
		available := e.Runtime == nil || e.Runtime.Available
		ct.notExecutable = e.Executable != nil && !*e.Executable && available
		d := stripAnnotations(e)
		switch {
		case full:
			dd := d // the index entry below must not lose its fields with a refused schema
			ct.def, ct.schemaRefused = intake(&dd)
		case old != nil && e.DefinitionRevision != "":
			if j, ok := old.byID[e.ID]; ok {
				if od := old.tools[j].def; od != nil && od.DefinitionRevision == e.DefinitionRevision {
					ct.def, ct.schemaRefused = od, old.tools[j].schemaRefused
				}
			}
		}
		ct.entry = d
		ct.entry.ArgumentsSchema, ct.entry.ResultSchema, ct.entry.ArgumentEncoding = nil, nil, ""
		st.byID[e.ID] = len(st.tools)
		st.tools = append(st.tools, ct)
	}
	return st
}

// withChanges applies an availability-only answer: changes is a replacement snapshot of the
// unavailable tools; every tool not listed is available.
func (st *catalogState) withChanges(cat *wire.Catalog, flags *runtimeFlags) *catalogState {
	next := st.clone()
	next.availabilityRevision = cat.AvailabilityRevision
	next.evaluatedAt = cat.EvaluatedAtUtc
	for i := range next.tools {
		ct := &next.tools[i]
		ct.runtime, ct.runtimeNotExec = nil, false
		if rt, ok := cat.Changes[ct.entry.ID]; ok {
			ct.runtime = &rt
			ct.runtimeNotExec = flags.change(ct.entry.ID)
		}
	}
	return next
}

// clone copies the state for modification (entries and definitions are shared: they are
// never modified in place).
func (st *catalogState) clone() *catalogState {
	next := *st
	next.tools = slices.Clone(st.tools)
	next.snap, next.hinted = nil, nil // seal makes them anew
	return &next
}

// missing returns the ids among w whose definition is not cached.
func (st *catalogState) missing(w want) []string {
	var ids []string
	if w.all {
		for _, ct := range st.tools {
			if ct.def == nil {
				ids = append(ids, ct.entry.ID)
			}
		}
		return ids
	}
	for _, id := range w.ids {
		if i, ok := st.byID[id]; ok && st.tools[i].def == nil && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// seal builds the annotated snapshot for grant. It runs once per state, before the state
// is shared.
func (st *catalogState) seal(grant wire.Policy) {
	snap := &Catalog{
		Revision:             st.revision,
		AvailabilityRevision: st.availabilityRevision,
		EvaluatedAt:          st.evaluatedAt,
		Categories:           st.categories,
		Tools:                make([]wire.ToolEntry, len(st.tools)),
		byID:                 st.byID,
	}
	st.hinted = nil
	for i, ct := range st.tools {
		e := ct.entry
		if ct.def != nil {
			e.ArgumentsSchema, e.ResultSchema, e.ArgumentEncoding = ct.def.ArgumentsSchema, ct.def.ResultSchema, ct.def.ArgumentEncoding
		}
		if ct.runtime != nil {
			rt := *ct.runtime
			e.Runtime = &rt
		}
		e.Denial = denial(&e, ct, grant)
		if e.Denial != nil {
			e.Executable = new(false)
		}
		snap.Tools[i] = e
		if d, ok := catalog.ParseHints(e.Keywords).Duration(); ok {
			if st.hinted == nil {
				st.hinted = make([]time.Duration, len(st.tools))
			}
			st.hinted[i] = d
		}
	}
	st.snap = snap
}

// hint returns the hint:duration of the tool with the exact id, if it has one.
func (st *catalogState) hint(id string) (time.Duration, bool) {
	if st.hinted == nil {
		return 0, false
	}
	i, ok := st.byID[id]
	if !ok || st.hinted[i] <= 0 {
		return 0, false
	}
	return st.hinted[i], true
}

// denial is the host's verdict on one tool: the grant first (a host decision), then what
// the app said.
func denial(e *wire.ToolEntry, ct cachedTool, grant wire.Policy) *wire.Denial {
	if !e.Policy.AllowedBy(grant) {
		return &wire.Denial{Code: wire.CodePolicyNotGranted,
			Reason: fmt.Sprintf("Tool policy '%s' exceeds the session grant '%s'.", e.Policy, grant)}
	}
	if ct.schemaRefused != "" {
		return &wire.Denial{Code: wire.CodeSchemaTooComplex, Reason: ct.schemaRefused}
	}
	if rt := ct.runtime; rt != nil && !rt.Available {
		d := &wire.Denial{Code: rt.Code, Reason: rt.Reason}
		if d.Code == "" {
			d.Code = wire.CodeUnavailable
		}
		if d.Reason == "" {
			d.Reason = fmt.Sprintf("Tool '%s' is not available in the current runtime state.", e.ID)
		}
		return d
	}
	if ct.notExecutable || ct.runtimeNotExec {
		return &wire.Denial{Code: wire.CodeNotExecutable,
			Reason: fmt.Sprintf("The app does not allow executing tool '%s' now.", e.ID)}
	}
	return nil
}

// stripAnnotations returns e without runtime state and host annotations.
func stripAnnotations(e wire.ToolEntry) wire.ToolEntry {
	e.Runtime, e.Executable, e.Denial = nil, nil, nil
	return e
}
