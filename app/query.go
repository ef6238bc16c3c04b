package app

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/internal/jsonscan"
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
				unavailable = unavailableMaps.Get().(map[string]wire.Runtime)
				defer func() { clear(unavailable); unavailableMaps.Put(unavailable) }()
			}
			unavailable[t.cat.Def.ID] = rt
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

// unavailableMaps are query's maps of the unavailable tools, reused: an app with tools
// down would otherwise build one on every query, the unchanged answer's too. The Set
// reads the map during AnswerPayload and keeps none of it (its availability state is a
// copy).
var unavailableMaps = sync.Pool{New: func() any { return make(map[string]wire.Runtime) }}

// parseQuery reads a tool.query payload leniently, as the reference SDK does: a payload
// that is not an object is {}, members of the wrong type are ignored, ids keep only
// non-blank strings (see queryIDs), detail and the revisions are trimmed, and the limit is
// resolved and clamped here (limit wins over maxResults; a limit that is not an integer
// means the default). known reports whether the app registers a tool id.
//
// The members are read in one pass without reflection (scanQuery): a host that polls with
// ifRevision pays for this on every query, and the unchanged answer it gets is otherwise
// nearly free. A payload the pass does not take is read the plain way (plainQueryMembers,
// the reference: FuzzParseQuery holds the two equal).
func parseQuery(payload jsontext.Value, known func(id string) bool) wire.Query {
	q := wire.Query{Detail: wire.DetailFull, Limit: wire.DefaultQueryLimit}
	if payload.Kind() != '{' {
		return q
	}
	m, ok := scanQuery(payload)
	if !ok {
		if m, ok = plainQueryMembers(payload); !ok {
			return q
		}
	}
	return m.query(q, known)
}

// queryMembers are the raw values of a query's members that parseQuery reads, by
// queryNames; nil for a member the payload does not have.
type queryMembers [len(queryNames)]jsontext.Value

// queryNames are the members parseQuery reads; others are ignored.
var queryNames = [...]string{"detail", "ids", "query", "feature", "policy", "executableOnly",
	"limit", "maxResults", "ifRevision", "ifAvailabilityRevision"}

// Indexes into queryMembers.
const (
	qDetail = iota
	qIDs
	qQuery
	qFeature
	qPolicy
	qExecutableOnly
	qLimit
	qMaxResults
	qIfRevision
	qIfAvailabilityRevision
)

// plainQueryMembers reads payload with the strict decoder into a map, and picks the
// members from it; false when the decoder refuses payload.
func plainQueryMembers(payload jsontext.Value) (m queryMembers, ok bool) {
	var all map[string]jsontext.Value
	if wire.Unmarshal(payload, &all) != nil {
		return m, false
	}
	for i, name := range queryNames {
		if v, ok := all[name]; ok {
			m[i] = v
		}
	}
	return m, true
}

// queryScanners are scanQuery's scanners, pooled with their buffers.
var queryScanners = sync.Pool{New: func() any { return new(jsonscan.Scanner) }}

// scanQuery reads payload as plainQueryMembers does, in one pass: it refuses what the
// strict decoder refuses (malformed JSON, invalid UTF-8, duplicate names, nesting deeper
// than wire.MaxDepth, an input above wire.DefaultMaxMessageBytes) and returns false, for
// the plain path to have the last word. The values are sub-slices of payload.
func scanQuery(payload []byte) (m queryMembers, ok bool) {
	if len(payload) > wire.DefaultMaxMessageBytes {
		return m, false
	}
	s := queryScanners.Get().(*jsonscan.Scanner)
	defer queryScanners.Put(s)
	defer s.Release()
	s.Reset(payload, wire.MaxDepth)
	if s.EnterObject() != nil {
		return m, false
	}
	for i := 0; ; i++ {
		name, more, err := s.Member(i)
		if err != nil {
			return queryMembers{}, false
		}
		if !more {
			break
		}
		v, err := s.Value()
		if err != nil {
			return queryMembers{}, false
		}
		for k, n := range queryNames {
			if string(name) == n {
				m[k] = v
				break
			}
		}
	}
	if s.End() != nil {
		return queryMembers{}, false
	}
	return m, true
}

// query applies the members to q, parseQuery's defaults.
func (m *queryMembers) query(q wire.Query, known func(id string) bool) wire.Query {
	str := func(k int) (string, bool) {
		v := m[k]
		if v.Kind() != '"' {
			return "", false
		}
		if raw := v[1 : len(v)-1]; bytes.IndexByte(raw, '\\') < 0 {
			return string(raw), true // valid UTF-8 without escapes: the string as it is
		}
		var s string
		if wire.Unmarshal(v, &s) != nil {
			return "", false
		}
		return s, true
	}
	if s, ok := str(qDetail); ok {
		switch d := strings.ToLower(strings.TrimSpace(s)); d {
		case wire.DetailIndex, wire.DetailDefinitions:
			q.Detail = d
		}
	}
	if v := m[qIDs]; v.Kind() == '[' {
		q.IDs = queryIDs(v, known)
	}
	q.Query, _ = str(qQuery)
	q.Feature, _ = str(qFeature)
	q.Policy, _ = str(qPolicy)
	q.ExecutableOnly = m[qExecutableOnly].Kind() == 't'
	limit := m[qLimit]
	if limit == nil {
		limit = m[qMaxResults]
	}
	if limit != nil {
		q.Limit = wire.DefaultQueryLimit
		if limit.Kind() == '0' {
			if n, err := strconv.ParseInt(string(limit), 10, 32); err == nil {
				q.Limit = int(max(1, min(n, wire.MaxQueryLimit)))
			}
		}
	}
	if s, ok := str(qIfRevision); ok {
		q.IfRevision = strings.TrimSpace(s)
	}
	if s, ok := str(qIfAvailabilityRevision); ok {
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
