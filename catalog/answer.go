package catalog

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ansight-go/ansight/wire"
)

// Answer answers a tool.query (docs/protocol/catalog.md#answer-forms) and returns the compact tool.catalog payload. It
// is not compressed: the caller applies the large-payload encoding.
//
// unavailable holds the runtime object of every tool that is unavailable now; a tool not
// in it is available (entries with Available true, or for unknown or hidden tools, are
// ignored). now is the evaluatedAtUtc of the snapshot. A nil q is the empty query.
//
// When the guard disables discovery, Answer returns a *wire.Error with code
// tool_discovery_disabled.
func (s *Set) Answer(q *wire.Query, unavailable map[string]wire.Runtime, now time.Time) ([]byte, error) {
	q, detail, short, err := s.begin(q, unavailable, now)
	if err != nil || short != nil {
		return short, err
	}
	b, at := s.appendFull(nil, q, detail, unavailable)
	if detail == wire.DetailDefinitions {
		return b, nil
	}
	return slices.Insert(b, at, appendEvaluatedAt(nil, now)...), nil
}

// begin reads q for Answer and AnswerPayload (nil is the empty query): its projection,
// and the short answer when its revisions call for one.
func (s *Set) begin(q *wire.Query, unavailable map[string]wire.Runtime, now time.Time) (*wire.Query, string, []byte, error) {
	if !s.guard.DiscoveryEnabled {
		return nil, "", nil, &wire.Error{Code: wire.CodeDiscoveryDisabled, Message: "Tool discovery is disabled by the current guard policy."}
	}
	if q == nil {
		q = &wire.Query{}
	}
	detail := normalizeDetail(q.Detail)
	return q, detail, s.shortAnswer(q, detail, unavailable, now), nil
}

// shortAnswer returns the unchanged or availability-only answer when q's revisions call
// for one (docs/protocol/catalog.md#answer-forms), else nil.
func (s *Set) shortAnswer(q *wire.Query, detail string, unavailable map[string]wire.Runtime, now time.Time) []byte {
	ifRevision := strings.TrimSpace(q.IfRevision)
	if ifRevision == "" || ifRevision != s.revision || detail == wire.DetailDefinitions {
		return nil
	}
	ifAvailability := strings.TrimSpace(q.IfAvailabilityRevision)
	if ifAvailability == "" {
		return slices.Clone(s.unchanged)
	}
	a := s.availabilityOf(unavailable)
	if ifAvailability == a.revision {
		return slices.Clone(s.unchanged)
	}
	return s.appendChanges(nil, a, now)
}

// normalizeDetail maps the query's detail to one of the three projections.
func normalizeDetail(d string) string {
	d = strings.TrimSpace(d)
	for _, v := range [...]string{wire.DetailIndex, wire.DetailDefinitions, wire.DetailFull} {
		if strings.EqualFold(d, v) {
			return v
		}
	}
	return wire.DetailFull
}

// appendChanges writes the availability-only form: the static revision still holds, and
// changes is a replacement snapshot of the visible tools that are unavailable now.
func (s *Set) appendChanges(b []byte, a *availability, now time.Time) []byte {
	ids := make([]string, 0, len(a.unavailable))
	for id := range a.unavailable {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	b = append(b, s.unchanged[:len(s.unchanged)-1]...)
	b = append(b, `,"availabilityRevision":"`...)
	b = append(b, a.revision...)
	b = append(b, `","evaluatedAtUtc":`...)
	b = appendTime(b, now)
	b = append(b, `,"changes":{`...)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b, _ = appendString(b, id) // registered ids are ASCII
		b = append(b, ':')
		r := a.unavailable[id]
		b = appendRuntime(b, &r)
	}
	return append(b, "}}"...)
}

// appendEvaluatedAt appends the evaluatedAtUtc member of a full index or full answer, the
// one part of it that changes from query to query.
func appendEvaluatedAt(b []byte, now time.Time) []byte {
	return appendTime(append(b, `,"evaluatedAtUtc":`...), now)
}

func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// filter is a parsed query.
type filter struct {
	ids            []string // nil: no id filter
	policy         wire.Policy
	policySet      bool // a policy was given; an unknown one matches nothing
	executableOnly bool
	// text is query and feature, normalized: the terms are its fields. terms holds them
	// when they are few (at most fewTerms distinct ones); many says there are more.
	text  string
	terms []string
	many  bool
	limit int
}

// fewTerms is the most distinct terms matched tool by tool; a longer text is matched term
// by term (matchText), so that its length costs linear time.
const fewTerms = 32

func newFilter(q *wire.Query) filter {
	f := filter{executableOnly: q.ExecutableOnly, limit: q.Limit}
	var seen map[string]bool
	for _, id := range q.IDs {
		if id = strings.TrimSpace(id); id != "" && !seen[id] {
			if seen == nil {
				seen = make(map[string]bool, len(q.IDs))
			}
			seen[id] = true
			f.ids = append(f.ids, id)
		}
	}
	if p := strings.TrimSpace(q.Policy); p != "" {
		f.policySet = true
		f.policy, _ = wire.ParsePolicy(p) // unknown ⇒ "" ⇒ nothing matches
	}
	if q.Query != "" || q.Feature != "" {
		f.text = normalizeText(q.Query + " " + q.Feature)
		for term := range strings.FieldsSeq(f.text) {
			if !slices.Contains(f.terms, term) {
				if len(f.terms) == fewTerms {
					f.terms, f.many = nil, true
					break
				}
				f.terms = append(f.terms, term)
			}
		}
	}
	if f.limit == 0 {
		f.limit = q.MaxResults
	}
	if f.limit == 0 {
		f.limit = wire.DefaultQueryLimit
	}
	f.limit = min(max(f.limit, 1), wire.MaxQueryLimit)
	return f
}

// candidates returns the visible tools the id filter leaves, in id order.
func (s *Set) candidates(f *filter) []*Tool {
	if f.ids == nil {
		return s.visible
	}
	out := make([]*Tool, 0, len(f.ids))
	for _, id := range f.ids {
		if t, ok := s.byID[id]; ok && s.guard.Visible(t.Def.Policy) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *Tool) int { return strings.Compare(a.Def.ID, b.Def.ID) })
	return out
}

// appendFull appends to dst the full payload of the index, definitions or full
// projection, all but its evaluatedAtUtc member, which belongs at offset at
// (appendEvaluatedAt); definitions have none, and at is then the end.
func (s *Set) appendFull(dst []byte, q *wire.Query, detail string, unavailable map[string]wire.Runtime) (b []byte, at int) {
	f := newFilter(q)
	return s.appendAnswer(dst, s.selectTools(&f, unavailable), detail, s.availabilityFor(detail, unavailable), 0)
}

// availabilityFor returns the availability the entries of the projection detail carry:
// nil for definitions, which carry none.
func (s *Set) availabilityFor(detail string, unavailable map[string]wire.Runtime) *availability {
	if detail == wire.DetailDefinitions {
		return nil
	}
	return s.availabilityOf(unavailable)
}

// selectTools returns the tools the answer to f lists. With few terms, each tool is
// matched against all of them and selection stops at the limit; with many, the terms
// narrow the whole selection first (matchText), then the limit applies.
func (s *Set) selectTools(f *filter, unavailable map[string]wire.Runtime) []*Tool {
	if f.plain() {
		return s.visible[:min(f.limit, len(s.visible))]
	}
	guardExec := s.guard.ExecutionEnabled // visible tools are within MaxPolicy
	var selected []*Tool
	for _, t := range s.candidates(f) {
		if !f.many && len(selected) == f.limit {
			break
		}
		if f.policySet && t.Def.Policy != f.policy {
			continue
		}
		if f.executableOnly {
			if _, down := unavailableRuntime(unavailable, t.Def.ID); down || !guardExec {
				continue
			}
		}
		if !f.many && !matchesTerms(t.searchText(), f.terms) {
			continue
		}
		if selected == nil {
			selected = make([]*Tool, 0, min(f.limit, len(s.visible)))
		}
		selected = append(selected, t)
	}
	if f.many {
		selected = matchText(selected, f.text)
		selected = selected[:min(len(selected), f.limit)]
	}
	return selected
}

// plain reports whether f selects the first visible tools up to its limit: no ids, policy,
// executableOnly or text.
func (f *filter) plain() bool {
	return f.ids == nil && !f.policySet && !f.executableOnly && f.text == ""
}

// appendAnswer appends to dst the answer listing selected, as appendFull does, a being
// availabilityFor(detail, …); from > 0 leaves out the answer's beginning up to and
// including the entry of selected[from-1] (what a Stream holds compressed, see
// answerStream), and at is then an offset in what is written.
func (s *Set) appendAnswer(dst []byte, selected []*Tool, detail string, a *availability, from int) (b []byte, at int) {
	size := 256 + len(s.categories)
	if from == 0 {
		size += len(s.head)
	}
	for _, t := range selected[from:] {
		if detail == wire.DetailIndex {
			size += len(t.indexOpen) + 24
		} else {
			size += len(t.defsOpen) + 24
		}
	}

	if a != nil {
		size += 64 * len(a.unavailable)
	}
	b = slices.Grow(dst, size)
	guardExec := s.guard.ExecutionEnabled
	if from == 0 {
		b = append(b, s.head...)
		b = append(b, `,"tools":[`...)
	}
	for i, t := range selected[from:] {
		if i+from > 0 {
			b = append(b, ',')
		}
		b = appendEntry(b, t, detail, a, guardExec)
	}
	b = append(b, `],"count":`...)
	b = strconv.AppendInt(b, int64(len(selected)), 10)
	switch detail {
	case wire.DetailDefinitions:
		b = append(b, `,"detail":"definitions"}`...)
		return b, len(b)
	case wire.DetailIndex:
		b = append(b, `,"detail":"index"`...)
	}
	b = append(b, `,"availabilityRevision":"`...)
	b = append(b, a.revision...)
	b = append(b, '"')
	at = len(b)
	b = append(b, `,"totalCount":`...)
	b = strconv.AppendInt(b, int64(len(s.visible)), 10)
	b = append(b, `,"categories":`...)
	b = append(b, s.categories...)
	return append(b, '}'), at
}

// appendEntry appends t's entry of the projection detail; a is the availability (nil for
// definitions, which carry none) and guardExec whether the guard lets tools execute.
func appendEntry(b []byte, t *Tool, detail string, a *availability, guardExec bool) []byte {
	switch detail {
	case wire.DetailIndex:
		b = append(b, t.indexOpen...)
	default:
		b = append(b, t.defsOpen...)
	}
	if detail != wire.DetailDefinitions {
		if r, down := a.unavailable[t.Def.ID]; down {
			b = append(b, `,"runtime":`...)
			b = appendRuntime(b, &r)
			b = append(b, `,"executable":false`...)
		} else if !guardExec {
			b = append(b, `,"executable":false`...)
		}
	}
	return append(b, '}')
}

// matchesTerms reports whether every term occurs in the normalized search text.
func matchesTerms(search string, terms []string) bool {
	for _, t := range terms {
		if !strings.Contains(search, t) {
			return false
		}
	}
	return true
}

// matchText keeps the tools whose search text contains every term of the normalized text
// (docs/protocol/catalog.md#search-text: terms are AND-ed), in place, for a text of more than fewTerms distinct terms.
// Terms are taken one at a time, each distinct one once, against the tools still kept,
// and the scan stops as soon as none is left: a term list of any length costs one pass
// over it plus, per distinct term that still matches something, one look at each tool
// kept. What is remembered (the terms seen) is bounded by the kept tools' own text, not by
// the query's length.
func matchText(tools []*Tool, text string) []*Tool {
	seen := make(map[string]bool)
	for term := range strings.FieldsSeq(text) {
		if len(tools) == 0 {
			break
		}
		if seen[term] {
			continue
		}
		seen[term] = true
		kept := tools[:0]
		for _, t := range tools {
			if strings.Contains(t.searchText(), term) {
				kept = append(kept, t)
			}
		}
		tools = kept
	}
	return tools
}
