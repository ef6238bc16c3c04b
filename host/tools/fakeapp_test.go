package tools

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// fakeApp is a hand-written app: a catalog answered by the rules of docs/protocol/catalog.md#answer-forms with opaque
// revisions set by the test, and calls answered by onCall (echo by default).
type fakeApp struct {
	t  testing.TB
	mu sync.Mutex
	// revision and availabilityRevision are whatever the test says; the fake does not hash.
	revision, availabilityRevision string
	tools                          []wire.ToolEntry // full definitions with definitionRevision
	unavailable                    map[string]wire.Runtime
	guardDenied                    bool   // executable:false on every available tool
	legacy                         bool   // answer every query with a full catalog without detail
	rawCatalog                     string // when set, every query gets this payload
	queries                        []wire.Query
	calls                          []wire.Call
	batches                        []wire.Batch
	onCall                         func(req *wire.Envelope, c wire.Call) []msg
	onBatch                        func(req *wire.Envelope, b wire.Batch) []msg
}

func tool(id string, policy wire.Policy, rev string) wire.ToolEntry {
	return wire.ToolEntry{
		ID: id, Name: id, Description: "the " + id + " tool", Category: "test", Policy: policy,
		ArgumentsSchema:    jsontext.Value(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
		ResultSchema:       jsontext.Value(`{"type":"object","additionalProperties":true}`),
		DefinitionRevision: rev,
	}
}

func newFakeApp(t testing.TB, tools ...wire.ToolEntry) *fakeApp {
	return &fakeApp{t: t, revision: "rev-1", availabilityRevision: "avail-1", tools: tools,
		unavailable: map[string]wire.Runtime{}}
}

func (a *fakeApp) handler() handler {
	return func(req *wire.Envelope) []msg {
		a.mu.Lock()
		defer a.mu.Unlock()
		switch req.Type {
		case wire.TypeQuery:
			var q wire.Query
			if err := wire.Unmarshal(req.Payload, &q); err != nil {
				a.t.Errorf("app: query payload: %v", err)
			}
			a.queries = append(a.queries, q)
			if a.rawCatalog != "" {
				return []msg{reply(a.t, req, wire.TypeCatalog, a.rawCatalog)}
			}
			return []msg{reply(a.t, req, wire.TypeCatalog, a.answer(q))}
		case wire.TypeCall:
			var c wire.Call
			if err := wire.Unmarshal(req.Payload, &c); err != nil {
				a.t.Errorf("app: call payload: %v", err)
			}
			a.calls = append(a.calls, c)
			if a.onCall != nil {
				return a.onCall(req, c)
			}
			res := c.Arguments
			if len(res) == 0 {
				res = jsontext.Value(`{}`)
			}
			return []msg{reply(a.t, req, wire.TypeResult, wire.Result{ToolID: c.ToolID, Success: true, Result: res})}
		case wire.TypeBatch:
			var b wire.Batch
			if err := wire.Unmarshal(req.Payload, &b); err != nil {
				a.t.Errorf("app: batch payload: %v", err)
			}
			a.batches = append(a.batches, b)
			if a.onBatch != nil {
				return a.onBatch(req, b)
			}
			out := wire.BatchResult{Success: true, Requested: len(b.Calls), Completed: len(b.Calls)}
			for i, raw := range b.Calls {
				var c wire.Call
				if err := wire.Unmarshal(raw, &c); err != nil {
					a.t.Errorf("app: batch call: %v", err)
				}
				out.Results = append(out.Results, wire.BatchItem{Index: i, CallID: c.CallID,
					Outcome: wire.Outcome{ToolID: c.ToolID, Success: true, Result: jsontext.Value(`{}`)}})
			}
			return []msg{reply(a.t, req, wire.TypeBatchResult, out)}
		}
		if req.Type == wire.TypeCancel { // recorded by the harness; never answered
			return nil
		}
		a.t.Errorf("app: unexpected request type %q", req.Type)
		return nil
	}
}

// answer implements the catalog decision table of docs/protocol/catalog.md#answer-forms.
func (a *fakeApp) answer(q wire.Query) any {
	static := q.IfRevision != "" && q.IfRevision == a.revision
	avail := q.IfAvailabilityRevision == "" || q.IfAvailabilityRevision == a.availabilityRevision
	defs := q.Detail == wire.DetailDefinitions
	evaluated := time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)
	switch {
	case a.legacy:
	case static && avail && !defs:
		return map[string]any{"schema": wire.CatalogSchema, "revision": a.revision, "unchanged": true}
	case static && !defs:
		changes := map[string]wire.Runtime{}
		for id, rt := range a.unavailable {
			changes[id] = rt
		}
		return wire.Catalog{Schema: wire.CatalogSchema, Revision: a.revision, Unchanged: true,
			AvailabilityRevision: a.availabilityRevision, EvaluatedAtUtc: evaluated, Changes: changes}
	}
	cat := wire.Catalog{Schema: wire.CatalogSchema, Revision: a.revision, Tools: []wire.ToolEntry{}}
	for _, e := range a.tools {
		if len(q.IDs) > 0 && !slices.Contains(q.IDs, e.ID) {
			continue
		}
		if q.Detail != wire.DetailDefinitions || a.legacy {
			if rt, ok := a.unavailable[e.ID]; ok {
				e.Runtime = &rt
				e.Executable = new(false)
			} else if a.guardDenied {
				e.Executable = new(false)
			}
		}
		if q.Detail == wire.DetailIndex && !a.legacy {
			e.ArgumentsSchema, e.ResultSchema, e.ArgumentEncoding = nil, nil, ""
		}
		cat.Tools = append(cat.Tools, e)
	}
	cat.Count = new(len(cat.Tools))
	switch {
	case a.legacy:
		cat.Schema = "ansight.tool-catalog.v2"
	case defs:
		cat.Detail = wire.DetailDefinitions
		return cat
	case q.Detail == wire.DetailIndex:
		cat.Detail = wire.DetailIndex
	}
	cat.AvailabilityRevision = a.availabilityRevision
	cat.EvaluatedAtUtc = evaluated
	cat.TotalCount = new(len(a.tools))
	cat.Categories = map[string]int{"test": len(a.tools)}
	return cat
}

// queryLog returns the queries seen so far and forgets them.
func (a *fakeApp) queryLog() []wire.Query {
	a.mu.Lock()
	defer a.mu.Unlock()
	q := a.queries
	a.queries = nil
	return q
}

func (a *fakeApp) callCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.calls) + len(a.batches)
}

func (a *fakeApp) set(f func(a *fakeApp)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f(a)
}
