package conformance

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/ansight-go/ansight/wire"
)

// catalogView is the app's catalog as the suite reads it from the full projection.
type catalogView struct {
	revision, availabilityRevision string
	totalCount                     int
	categories                     map[string]any
	tools                          []*toolView
	byID                           map[string]*toolView
}

// toolView is one visible tool.
type toolView struct {
	id, name, description, category, keywords string
	prerequisites                             []string
	policy                                    wire.Policy
	encoding                                  string
	args                                      map[string]any
	runtime                                   map[string]any // nil when available
	executable                                bool
	definitionRevision                        string
}

func (t *toolView) available() bool { return t.runtime == nil }

// searchable is the normalized text the query and feature filters search (docs/protocol/catalog.md#search-text).
func (t *toolView) searchable() string {
	return normalize(strings.Join(append([]string{t.id, t.name, t.description, t.category, t.keywords}, t.prerequisites...), " "))
}

// normalize lower-cases s and turns every rune that is not a letter or a digit into a
// space, as the query filters do.
func normalize(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return ' '
	}, s)
}

// terms splits a filter text into its search terms.
func terms(s string) []string { return strings.Fields(normalize(s)) }

// readCatalog builds the view of a full catalog payload (already checked by
// catalogProblems).
func readCatalog(p map[string]any) *catalogView {
	v := &catalogView{byID: map[string]*toolView{}}
	v.revision, _ = p["revision"].(string)
	v.availabilityRevision, _ = p["availabilityRevision"].(string)
	if n, ok := p["totalCount"].(float64); ok {
		v.totalCount = int(n)
	}
	v.categories, _ = p["categories"].(map[string]any)
	for _, e := range entries(p) {
		t := &toolView{executable: true}
		t.id, _ = e["id"].(string)
		t.name, _ = e["name"].(string)
		t.description, _ = e["description"].(string)
		t.category, _ = e["category"].(string)
		t.keywords, _ = e["keywords"].(string)
		t.encoding, _ = e["argumentEncoding"].(string)
		t.definitionRevision, _ = e["definitionRevision"].(string)
		t.args, _ = e["argumentsSchema"].(map[string]any)
		if s, ok := e["policy"].(string); ok {
			t.policy, _ = wire.ParsePolicy(s)
		}
		if list, ok := e["prerequisiteToolIds"].([]any); ok {
			for _, x := range list {
				if s, ok := x.(string); ok {
					t.prerequisites = append(t.prerequisites, s)
				}
			}
		}
		if rt, ok := e["runtime"].(map[string]any); ok && rt["available"] != true {
			t.runtime = rt
		}
		if e["executable"] == false || t.runtime != nil {
			t.executable = false
		}
		if t.id == "" || v.byID[t.id] != nil {
			continue
		}
		v.tools = append(v.tools, t)
		v.byID[t.id] = t
	}
	// Expectations are computed in the contract's order, whatever order the app used.
	slices.SortFunc(v.tools, func(a, b *toolView) int { return strings.Compare(a.id, b.id) })
	return v
}

// entries returns the tool entries of a catalog payload that are objects.
func entries(p map[string]any) []map[string]any {
	list, _ := p["tools"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, x := range list {
		if e, ok := x.(map[string]any); ok {
			out = append(out, e)
		}
	}
	return out
}

// ids lists the ids of a catalog payload's entries, in order.
func ids(p map[string]any) []string {
	var out []string
	for _, e := range entries(p) {
		id, _ := e["id"].(string)
		out = append(out, id)
	}
	return out
}

// catalogProblems checks a full catalog payload of the given detail (docs/protocol/catalog.md#full-payload).
func catalogProblems(p map[string]any, detail string) []string {
	var list []string
	bad := func(format string, args ...any) { list = append(list, fmt.Sprintf(format, args...)) }
	if p["schema"] != wire.CatalogSchema {
		bad("schema is %s, want %q", describe(p["schema"]), wire.CatalogSchema)
	}
	if s, _ := p["revision"].(string); s == "" {
		bad("revision must be a non-empty string, got %s", describe(p["revision"]))
	}
	if u, present := p["unchanged"]; present && u != false {
		bad("a full catalog has unchanged %s", describe(u))
	}
	tools, ok := p["tools"].([]any)
	if !ok {
		bad("tools must be an array, got %s", describe(p["tools"]))
	}
	if n, ok := p["count"].(float64); !ok || int(n) != len(tools) {
		bad("count is %s, but tools has %d entries", describe(p["count"]), len(tools))
	}
	switch got, _ := p["detail"].(string); {
	case detail == wire.DetailFull && got != "" && got != wire.DetailFull:
		bad("detail is %q for a full catalog", got)
	case detail != wire.DetailFull && got != detail:
		bad("detail is %s, want %q", describe(p["detail"]), detail)
	}
	summary := []string{"availabilityRevision", "evaluatedAtUtc", "totalCount", "categories"}
	if detail == wire.DetailDefinitions {
		for _, k := range summary {
			if _, present := p[k]; present {
				bad("a definitions catalog has %s", k)
			}
		}
	} else {
		if s, _ := p["availabilityRevision"].(string); s == "" {
			bad("availabilityRevision must be a non-empty string, got %s", describe(p["availabilityRevision"]))
		}
		list = append(list, timestampProblems("evaluatedAtUtc", p["evaluatedAtUtc"])...)
		total, ok := p["totalCount"].(float64)
		if !ok || total < float64(len(tools)) {
			bad("totalCount is %s with %d tools listed", describe(p["totalCount"]), len(tools))
		}
		cats, ok := p["categories"].(map[string]any)
		if !ok {
			bad("categories must be an object, got %s", describe(p["categories"]))
		}
		sum := 0.0
		for k, n := range cats {
			f, ok := n.(float64)
			if !ok || f < 1 {
				bad("categories[%q] is %s", k, describe(n))
			}
			sum += f
		}
		if ok && sum != total {
			bad("categories add up to %g, totalCount is %g", sum, total)
		}
	}
	prev := ""
	for i, x := range tools {
		e, ok := x.(map[string]any)
		if !ok {
			bad("tools[%d] is %s", i, describe(x))
			continue
		}
		list = append(list, entryProblems(e, detail, fmt.Sprintf("tools[%d]", i))...)
		id, _ := e["id"].(string)
		if i > 0 && id <= prev {
			bad("tools are not sorted by id (byte order): %q after %q", id, prev)
		}
		prev = id
	}
	return list
}

// entryProblems checks one catalog entry of the given projection.
func entryProblems(e map[string]any, detail, at string) []string {
	var list []string
	bad := func(format string, args ...any) { list = append(list, at+": "+fmt.Sprintf(format, args...)) }
	for _, k := range []string{"id", "name", "description", "category", "definitionRevision"} {
		if s, ok := e[k].(string); !ok || (s == "" && (k == "id" || k == "definitionRevision")) {
			bad("%s must be a string, got %s", k, describe(e[k]))
		}
	}
	if s, ok := e["policy"].(string); !ok {
		bad("policy must be a string, got %s", describe(e["policy"]))
	} else if _, err := wire.ParsePolicy(s); err != nil {
		bad("policy %q is not read, write or critical", s)
	}
	if k, present := e["keywords"]; present {
		if _, ok := k.(string); !ok {
			bad("keywords must be a string, got %s", describe(k))
		}
	}
	if p, present := e["prerequisiteToolIds"]; present {
		list2, ok := p.([]any)
		if !ok {
			bad("prerequisiteToolIds must be an array, got %s", describe(p))
		}
		for _, x := range list2 {
			if _, ok := x.(string); !ok {
				bad("prerequisiteToolIds holds %s", describe(x))
			}
		}
	}
	schemas := detail != wire.DetailIndex
	for _, k := range []string{"argumentsSchema", "resultSchema"} {
		_, isObj := e[k].(map[string]any)
		_, present := e[k]
		switch {
		case schemas && !isObj:
			bad("%s must be an object, got %s", k, describe(e[k]))
		case !schemas && present:
			bad("an index entry has %s", k)
		}
	}
	if enc, present := e["argumentEncoding"]; present {
		if !schemas {
			bad("an index entry has argumentEncoding")
		} else if enc != wire.ArgumentEncodingJSON && enc != wire.ArgumentEncodingFlattenedString {
			bad("argumentEncoding %s is unknown", describe(enc))
		}
	}
	rt, hasRuntime := e["runtime"]
	x, hasExec := e["executable"]
	if detail == wire.DetailDefinitions {
		if hasRuntime || hasExec {
			bad("a definitions entry has runtime or executable")
		}
		return list
	}
	if hasRuntime {
		o, ok := rt.(map[string]any)
		if !ok {
			bad("runtime must be an object, got %s", describe(rt))
		} else {
			list = append(list, runtimeProblems(o, at+".runtime")...)
			if o["available"] == false && x != false {
				bad("an unavailable tool must carry executable:false")
			}
		}
	}
	if hasExec {
		if _, ok := x.(bool); !ok {
			bad("executable must be a boolean, got %s", describe(x))
		}
	}
	return list
}

// runtimeProblems checks a runtime object (docs/protocol/catalog.md#availability). executable inside it is a variant
// hosts accept (docs/protocol/compatibility.md#tolerated-variants).
func runtimeProblems(o map[string]any, at string) []string {
	var list []string
	bad := func(format string, args ...any) { list = append(list, at+": "+fmt.Sprintf(format, args...)) }
	if _, ok := o["available"].(bool); !ok {
		bad("available must be a boolean, got %s", describe(o["available"]))
	}
	for _, k := range []string{"code", "reason", "requiredState", "remediation"} {
		if v, present := o[k]; present {
			if s, ok := v.(string); !ok || s == "" {
				bad("%s must be a non-empty string when present, got %s", k, describe(v))
			}
		}
	}
	if v, present := o["retryable"]; present {
		if _, ok := v.(bool); !ok {
			bad("retryable must be a boolean, got %s", describe(v))
		}
	}
	return list
}

// timestampProblems checks a written timestamp: RFC 3339 in UTC, "Z" or "+00:00".
func timestampProblems(name string, v any) []string {
	s, ok := v.(string)
	if !ok {
		return []string{fmt.Sprintf("%s must be an RFC 3339 string, got %s", name, describe(v))}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return []string{fmt.Sprintf("%s %q is not RFC 3339", name, s)}
	}
	if _, off := t.Zone(); off != 0 || strings.HasSuffix(s, "-00:00") {
		return []string{fmt.Sprintf("%s %q is not in UTC", name, s)}
	}
	return nil
}

// unavailable maps the ids of a catalog payload's unavailable entries to their runtime.
func unavailable(p map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, e := range entries(p) {
		if rt, ok := e["runtime"].(map[string]any); ok && rt["available"] == false {
			id, _ := e["id"].(string)
			out[id] = rt
		}
	}
	return out
}

// sameRuntime compares two runtime objects, ignoring executable inside them (docs/protocol/compatibility.md#tolerated-variants).
func sameRuntime(a, b map[string]any) bool {
	strip := func(m map[string]any) map[string]any {
		m = maps.Clone(m)
		delete(m, "executable")
		return m
	}
	return equalJSON(strip(a), strip(b))
}

// equalJSON compares decoded JSON values.
func equalJSON(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			w, ok := b[k]
			if !ok || !equalJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		return ok && slices.EqualFunc(a, b, equalJSON)
	default:
		return a == b
	}
}

// keysOf returns a map's keys, sorted.
func keysOf[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
