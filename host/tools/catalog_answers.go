package tools

import (
	"slices"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// An app that keeps its catalog answers (package catalog does, see wire.Template) sends
// the same query the same compressed bytes again, but for a stored tail at the end:
// evaluatedAtUtc, totalCount and categories. The client keeps the last answers it decoded,
// per query, and reads such a repeat by comparing its compressed bytes with the kept ones
// (wire.SharedPrefix) and decoding the tail alone — not by inflating and decoding half a
// megabyte of JSON again. The plain path, UnmarshalPayload, is the reference: the answer
// is the same whichever path reads it (FuzzCatalogAnswers).

// maxKeptAnswers bounds the answers a client keeps: the few queries repeated (index,
// definitions, full).
const maxKeptAnswers = 4

// tailMembers are the catalog members a kept answer's tail may hold: what changes from
// one answer of an unchanged catalog to the next. The tools are never in it.
var tailMembers = []string{"evaluatedAtUtc", "totalCount", "categories"}

// catalogAnswers holds a client's kept answers by the query's payload, and the memo of
// the last answer decoded in full: an answer to another query (another limit, a page)
// repeats most of it, and wire.UnmarshalCatalogPayload then inflates and decodes only
// what differs (FuzzCatalogMemo holds it against UnmarshalPayload).
type catalogAnswers struct {
	mu   sync.Mutex
	kept map[string]*keptAnswer
	memo *wire.CatalogMemo
}

// keptAnswer is a decoded answer whose payload a Template wrote: its compressed head, the
// catalog without the tail's members, and the tail's member names.
type keptAnswer struct {
	prefix *wire.SharedPrefix
	head   wire.Catalog
	names  []string
	json   []byte // the inflated payload the answer was decoded from
}

// decode decodes into r a tool.catalog payload that answers query (its payload as sent).
// On a repeat of a kept answer, r.payload is nil and r.kept is the answer repeated: its
// JSON up to the tail is the same (see response.catalogJSON).
func (c *catalogAnswers) decode(query string, raw []byte, maxInflated int64, r *response) error {
	c.mu.Lock()
	k := c.kept[query]
	c.mu.Unlock()
	if k != nil {
		if tail, ok := k.prefix.Tail(raw, maxInflated); ok {
			if names, t, ok := readTail(tail); ok && slices.Equal(names, k.names) {
				cat := k.head
				withTail(&cat, &t, names)
				r.catalog, r.kept, r.tail, r.inflated = &cat, k, tail, k.prefix.Len()+len(tail)
				return nil
			}
		}
	}

	c.mu.Lock()
	prev := c.memo
	c.mu.Unlock()
	payload, cat, memo, err := wire.UnmarshalCatalogPayload(raw, maxInflated, prev)
	if err != nil {
		return err
	}
	if len(cat.Tools) > 0 {
		c.mu.Lock()
		c.memo = memo
		c.mu.Unlock()
	}
	r.catalog, r.payload = cat, payload
	if query == "" {
		return nil
	}
	if p := wire.PrefixOf(raw, payload); p != nil {
		if names, _, ok := readTail(payload[p.Len():]); ok {
			k := &keptAnswer{prefix: p, head: *cat, names: names, json: payload}
			var none wire.Catalog
			withTail(&k.head, &none, names) // the members the tail sets are the tail's own
			c.mu.Lock()
			if c.kept == nil {
				c.kept = make(map[string]*keptAnswer)
			}
			if _, ok := c.kept[query]; !ok && len(c.kept) >= maxKeptAnswers {
				for old := range c.kept {
					delete(c.kept, old)
					break
				}
			}
			c.kept[query] = k
			c.mu.Unlock()
		}
	}
	return nil
}

// readTail reads the end of a catalog payload after a kept head: "}" or "," and members
// among tailMembers, then "}". It returns the members' names in order and their values.
func readTail(tail []byte) (names []string, t wire.Catalog, ok bool) {
	if len(tail) == 1 && tail[0] == '}' {
		return nil, t, true
	}
	if len(tail) < 2 || tail[0] != ',' {
		return nil, t, false
	}
	obj := append([]byte{'{'}, tail[1:]...)
	var members map[string]jsontext.Value
	// Strict, as the whole payload is read: the head holds none of these names (the
	// payload it came from was read strictly with the tail), so the tail alone decides.
	if wire.Unmarshal(obj, &members) != nil || wire.Unmarshal(obj, &t) != nil {
		return nil, t, false
	}
	for _, n := range tailMembers {
		if _, ok := members[n]; ok {
			names = append(names, n)
		}
	}
	return names, t, len(names) == len(members)
}

// withTail sets the members named (tailMembers) of cat from t.
func withTail(cat, t *wire.Catalog, names []string) {
	for _, n := range names {
		switch n {
		case "evaluatedAtUtc":
			cat.EvaluatedAtUtc = t.EvaluatedAtUtc
		case "totalCount":
			cat.TotalCount = t.TotalCount
		case "categories":
			cat.Categories = t.Categories
		}
	}
}
