package app

import (
	"bytes"
	"context"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// query answers a tool.query payload with the catalog payload
// (docs/protocol/catalog.md#query), encoded for the wire: the Set keeps the answers it gave.
func (x *exchange) query(ctx context.Context, payload jsontext.Value) ([]byte, *wire.Error) {
	a := x.app
	v, err := a.current()
	if err != nil {
		a.log.ErrorContext(ctx, "building the catalog failed", "err", err)
		return nil, &wire.Error{Code: wire.CodeExecutionException, Message: "The tool catalog could not be built."}
	}
	if !v.guard.DiscoveryEnabled {
		return nil, &wire.Error{Code: wire.CodeDiscoveryDisabled, Message: "Tool discovery is disabled by the current guard."}
	}
	q := parseQuery(payload, func(id string) bool { _, ok := v.set.Lookup(id); return ok })
	var unavailable map[string]wire.Runtime
	for _, t := range v.gated {
		if rt := a.availabilityOf(ctx, t); !rt.Available {
			if unavailable == nil {
				unavailable = make(map[string]wire.Runtime)
			}
			unavailable[t.def.ID] = rt
		}
	}
	out, err := v.set.AnswerPayload(&q, unavailable, a.clock())
	if err != nil {
		if we, ok := err.(*wire.Error); ok {
			return nil, we
		}
		a.log.ErrorContext(ctx, "answering a catalog query failed", "err", err)
		return nil, &wire.Error{Code: wire.CodeExecutionException, Message: "The tool catalog could not be encoded."}
	}
	x.encoded = true
	return out, nil
}

// parseQuery reads a tool.query payload leniently, as the reference SDK does: a payload
// that is not an object is {}, members of the wrong type are ignored, ids keep only
// non-blank strings (see queryIDs), detail and the revisions are trimmed, and the limit is
// resolved and clamped here (limit wins over maxResults; a limit that is not an integer
// means the default). known reports whether the app registers a tool id.
func parseQuery(payload jsontext.Value, known func(id string) bool) wire.Query {
	q := wire.Query{Detail: wire.DetailFull, Limit: wire.DefaultQueryLimit}
	if payload.Kind() != '{' {
		return q
	}
	var m map[string]jsontext.Value
	if wire.Unmarshal(payload, &m) != nil {
		return q
	}
	str := func(name string) (string, bool) {
		var s string
		v, ok := m[name]
		if !ok || v.Kind() != '"' || wire.Unmarshal(v, &s) != nil {
			return "", false
		}
		return s, true
	}
	if s, ok := str("detail"); ok {
		switch d := strings.ToLower(strings.TrimSpace(s)); d {
		case wire.DetailIndex, wire.DetailDefinitions:
			q.Detail = d
		}
	}
	if v := m["ids"]; v.Kind() == '[' {
		q.IDs = queryIDs(v, known)
	}
	q.Query, _ = str("query")
	q.Feature, _ = str("feature")
	q.Policy, _ = str("policy")
	q.ExecutableOnly = m["executableOnly"].Kind() == 't'
	limit, ok := m["limit"]
	if !ok {
		limit, ok = m["maxResults"]
	}
	if ok {
		q.Limit = wire.DefaultQueryLimit
		if limit.Kind() == '0' {
			if n, err := strconv.ParseInt(string(limit), 10, 32); err == nil {
				q.Limit = int(max(1, min(n, wire.MaxQueryLimit)))
			}
		}
	}
	if s, ok := str("ifRevision"); ok {
		q.IfRevision = strings.TrimSpace(s)
	}
	if s, ok := str("ifAvailabilityRevision"); ok {
		q.IfAvailabilityRevision = strings.TrimSpace(s)
	}
	return q
}

// queryIDs reads a query's ids: the non-blank strings of list, trimmed, each once, in
// order; other values are skipped. An id the app does not register can only match
// nothing, so one is kept (a list of unknown ids must still match nothing) and the others
// dropped: whatever the list's length, work is linear in it and what is kept is bounded by
// the catalog. list is valid JSON (the strict decoder read it).
func queryIDs(list jsontext.Value, known func(id string) bool) []string {
	var ids []string
	seen := make(map[string]bool)
	unknown := false
	dec := jsontext.NewDecoder(bytes.NewReader(list))
	if _, err := dec.ReadToken(); err != nil {
		return nil
	}
	for k := dec.PeekKind(); k != ']' && k != 0; k = dec.PeekKind() {
		if k != '"' {
			if dec.SkipValue() != nil {
				break
			}
			continue
		}
		tok, err := dec.ReadToken()
		if err != nil {
			break
		}
		id := strings.TrimSpace(tok.String())
		switch {
		case id == "" || seen[id]:
		case known(id):
			seen[id] = true
			ids = append(ids, id)
		case !unknown:
			unknown, seen[id] = true, true
			ids = append(ids, id)
		}
	}
	return ids
}
