package app

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// query answers a tool.query payload with the catalog payload (spec §2), encoded for the
// wire: the Set keeps the answers it gave.
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
	q := parseQuery(payload)
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
// non-blank strings, detail and the revisions are trimmed, and the limit is resolved and
// clamped here (limit wins over maxResults; a limit that is not an integer means the
// default).
func parseQuery(payload jsontext.Value) wire.Query {
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
		var items []jsontext.Value
		if wire.Unmarshal(v, &items) == nil {
			for _, it := range items {
				var s string
				if it.Kind() == '"' && wire.Unmarshal(it, &s) == nil {
					if s = strings.TrimSpace(s); s != "" && !slices.Contains(q.IDs, s) {
						q.IDs = append(q.IDs, s)
					}
				}
			}
		}
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
