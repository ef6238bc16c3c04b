package catalog

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/schema"
	"github.com/ansight-go/ansight/wire"
)

// Tool is one registered tool of a Set with everything derived from its definition.
// Tools are shared between Sets and must not be modified.
type Tool struct {
	// Def is the definition as registered (PrerequisiteToolIDs normalized: trimmed,
	// de-duplicated and sorted).
	Def Definition
	// DefinitionRevision is the revision of the tool's static definition (docs/protocol/catalog.md#definition-revision).
	DefinitionRevision string
	// Args and Result are the compiled schemas of the arguments and the result.
	Args, Result *schema.Schema

	indexOpen []byte // index entry without its closing brace
	defsOpen  []byte // definitions entry without its closing brace
	availOpen []byte // `{"id":"…","runtime":` for the availability revision
	// search is the normalized searchable text (docs/protocol/catalog.md#search-text
	// "query"), made by the first query that searches (searchText): most catalogs are
	// listed, not searched, and it was a quarter of making a Tool.
	search atomic.Pointer[string]
}

// quotedID is t's id as a JSON string, as appendString writes it: availOpen's.
func (t *Tool) quotedID() []byte {
	return t.availOpen[len(`{"id":`) : len(t.availOpen)-len(`,"runtime":`)]
}

// searchText returns t's normalized searchable text, making it the first time.
func (t *Tool) searchText() string {
	if s := t.search.Load(); s != nil {
		return *s
	}
	s := searchText(&t.Def)
	t.search.Store(&s) // the same text whoever stores it first
	return s
}

// Set is an immutable snapshot of an app's tools and its guard, with every static part of
// a tool.catalog answer computed once. It is safe for concurrent use.
type Set struct {
	guard    Guard
	tools    []*Tool // every registered tool, sorted by id
	byID     map[string]*Tool
	visible  []*Tool // sorted by id
	revision string

	unchanged  []byte // the 3-key unchanged payload
	head       []byte // `{"schema":…,"revision":…,"tools":[`
	categories []byte // `{"cat":n,…}` over visible tools

	avail   atomic.Pointer[availability] // last availability revision, keyed by content
	answers answerCache                  // full answers given, for AnswerPayload
	streams [3]answerStream              // each projection's answer text compressed, see streamOf
	// changed says the Set was made from another (WithGuard): its streams are compressed
	// in pieces, for its successors to copy (streamOf).
	changed bool
}

// NewSet checks every definition and builds a Set under guard g. Duplicate ids are an
// error. defs is not retained. It is NewTool of each definition, then NewSetOf.
func NewSet(defs []Definition, g Guard) (*Set, error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	tools := make([]*Tool, 0, len(defs))
	seen := make(map[string]struct{}, len(defs))
	var errs []error
	for i := range defs {
		d := &defs[i]
		if _, dup := seen[d.ID]; dup {
			errs = append(errs, duplicate(d.ID))
			continue
		}
		seen[d.ID] = struct{}{}
		t, err := newTool(d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		tools = append(tools, t)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortFunc(tools, compareIDs)
	return build(tools, nil, g), nil
}

// NewTool checks d and derives everything a Set publishes of it: its compiled schemas, its
// definition revision, its answer entries and its search text. The Tool is immutable and
// d is not retained. An app makes each tool's once, when it is registered, and builds its
// Sets of them (NewSetOf): a catalog change, or the first catalog of a session, then costs
// the Set's own parts and not every tool's again.
func NewTool(d Definition) (*Tool, error) { return newTool(&d) }

// NewSetOf builds a Set of tools made by NewTool under guard g: NewSet of their
// definitions, without deriving the tools again. Duplicate ids are an error. tools is not
// retained.
func NewSetOf(tools []*Tool, g Guard) (*Set, error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	sorted := slices.Clone(tools)
	if increasing(sorted) {
		// Already in id order without duplicates, as an app keeps its tools (app.Register):
		// no sort, no duplicate to report.
		return build(sorted, nil, g), nil
	}
	slices.SortFunc(sorted, compareIDs)
	var errs []error
	for i := 1; i < len(sorted); i++ {
		if sorted[i].Def.ID == sorted[i-1].Def.ID && (i == 1 || sorted[i-2].Def.ID != sorted[i].Def.ID) {
			errs = append(errs, duplicate(sorted[i].Def.ID))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return build(sorted, nil, g), nil
}

func compareIDs(a, b *Tool) int { return strings.Compare(a.Def.ID, b.Def.ID) }

// increasing reports whether tools' ids strictly increase (byte order).
func increasing(tools []*Tool) bool {
	for i := 1; i < len(tools); i++ {
		if tools[i-1].Def.ID >= tools[i].Def.ID {
			return false
		}
	}
	return true
}

func duplicate(id string) error { return fmt.Errorf("catalog: tool id %q is registered twice", id) }

// WithGuard returns a Set with the same tools under guard g, reusing every per-tool
// computation.
func (s *Set) WithGuard(g Guard) (*Set, error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	n := build(s.tools, s.byID, g) // the same tools: the same index
	n.changed = true
	// The new Set's first answers may copy the stretches of s's (streamOf): a guard
	// change shows or hides a few tools, and most of the text is the same.
	for i := range s.streams {
		as := &s.streams[i]
		as.mu.Lock()
		n.streams[i].prev = as.last()
		as.mu.Unlock()
	}
	return n, nil
}

// Guard returns the Set's guard.
func (s *Set) Guard() Guard { return s.guard }

// Revision returns the catalog revision (docs/protocol/catalog.md#catalog-revision): it covers the guard and the definition
// revisions of all visible tools.
func (s *Set) Revision() string { return s.revision }

// Lookup returns the registered tool with exactly this id (case-sensitive), visible or not.
func (s *Set) Lookup(id string) (*Tool, bool) {
	t, ok := s.byID[id]
	return t, ok
}

// Visible returns the tools the guard lets clients discover, sorted by id (byte order).
// The slice is shared: do not modify it.
func (s *Set) Visible() []*Tool { return s.visible }

// Tools returns every registered tool, sorted by id. The slice is shared: do not modify it.
func (s *Set) Tools() []*Tool { return s.tools }

// build derives the guard-dependent parts of a Set; byID, when not nil, is the index of
// tools (another Set's, which is never modified).
func build(tools []*Tool, byID map[string]*Tool, g Guard) *Set {
	s := &Set{guard: g, tools: tools, byID: byID}
	if byID == nil {
		s.byID = make(map[string]*Tool, len(tools))
		for _, t := range tools {
			s.byID[t.Def.ID] = t
		}
	}
	n := 0
	for _, t := range tools {
		if g.Visible(t.Def.Policy) {
			n++
		}
	}
	s.visible = make([]*Tool, 0, n)
	for _, t := range tools {
		if g.Visible(t.Def.Policy) {
			s.visible = append(s.visible, t)
		}
	}

	// revision: {"guard":{…},"schema":…,"tools":[{"definitionRevision":D,"id":I},…]}, keys
	// in canonical order; ids and revisions are plain ASCII.
	w := newHashWriter()
	w.writeString(`{"guard":{"discoveryEnabled":` + strconv.FormatBool(g.DiscoveryEnabled) +
		`,"executionEnabled":` + strconv.FormatBool(g.ExecutionEnabled) +
		`,"maxPolicy":"` + string(g.MaxPolicy) + `"},"schema":"` + wire.CatalogSchema + `","tools":[`)
	var scratch []byte
	for i, t := range s.visible {
		scratch = scratch[:0]
		if i > 0 {
			scratch = append(scratch, ',')
		}
		scratch = append(scratch, `{"definitionRevision":"`...)
		scratch = append(scratch, t.DefinitionRevision...)
		scratch = append(scratch, `","id":`...)
		scratch = append(scratch, t.quotedID()...) // quoted once, in NewTool
		scratch = append(scratch, '}')
		w.write(scratch)
	}
	w.writeString("]}")
	s.revision = w.revision()

	s.head = []byte(`{"schema":"` + wire.CatalogSchema + `","revision":"` + s.revision + `"`)
	s.unchanged = append(slices.Clip(s.head), `,"unchanged":true}`...)

	counts := map[string]int{}
	for _, t := range s.visible {
		counts[t.Def.Category]++
	}
	cats := make([]string, 0, len(counts))
	for c := range counts {
		cats = append(cats, c)
	}
	slices.Sort(cats)
	b := []byte{'{'}
	for i, c := range cats {
		if i > 0 {
			b = append(b, ',')
		}
		b, _ = appendString(b, c)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(counts[c]), 10)
	}
	s.categories = append(b, '}')
	return s
}

// newTool checks d and derives a Tool from a private copy of it.
func newTool(d *Definition) (*Tool, error) {
	args, result, err := d.check()
	if err != nil {
		return nil, err
	}
	def := *d
	def.ArgumentsSchema = slices.Clone(d.ArgumentsSchema)
	def.ResultSchema = slices.Clone(d.ResultSchema)
	def.PrerequisiteToolIDs = normalizeIDs(d.PrerequisiteToolIDs)
	t := &Tool{Def: def, Args: args, Result: result}

	// The definitions-projection entry without definitionRevision is what the revision
	// hashes (docs/protocol/catalog.md#definition-revision), in canonical form.
	canon, err := appendStaticCanonical(nil, &def, args.Canonical(), result.Canonical())
	if err != nil {
		return nil, fmt.Errorf("catalog: tool %q: %w", def.ID, err)
	}
	sum := sha256.Sum256(canon)
	t.DefinitionRevision = formatRevision(sum[:])
	b, err := appendStatic(canon[:0], &def, args.Published(), result.Published())
	if err != nil {
		return nil, fmt.Errorf("catalog: tool %q: %w", def.ID, err)
	}
	b = b[:len(b)-1]
	b = append(b, `,"definitionRevision":"`...)
	b = append(b, t.DefinitionRevision...)
	t.defsOpen = append(b, '"')

	t.indexOpen, err = appendIndexOpen(nil, &def, t.DefinitionRevision)
	if err != nil {
		return nil, fmt.Errorf("catalog: tool %q: %w", def.ID, err)
	}
	t.availOpen, _ = appendString([]byte(`{"id":`), def.ID)
	t.availOpen = append(t.availOpen, `,"runtime":`...)
	return t, nil
}

// normalizeIDs trims, drops blanks, de-duplicates and sorts prerequisite ids.
func normalizeIDs(ids []string) []string {
	var out []string
	for _, id := range ids {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// appendCommon appends `{"id":…,"name":…,"description":…,"category":…,"policy":…`.
func appendCommon(b []byte, d *Definition) ([]byte, error) {
	var err error
	fields := [...]struct{ name, value string }{
		{`{"id":`, d.ID}, {`,"name":`, d.Name}, {`,"description":`, d.Description},
		{`,"category":`, d.Category}, {`,"policy":`, string(d.Policy)},
	}
	for _, f := range fields {
		b = append(b, f.name...)
		if b, err = appendString(b, f.value); err != nil {
			return nil, fmt.Errorf("%s %w", strings.Trim(f.name, `{,":`), err)
		}
	}
	return b, nil
}

// appendOptional appends keywords and prerequisiteToolIds when they are not empty.
func appendOptional(b []byte, d *Definition) ([]byte, error) {
	var err error
	if strings.TrimSpace(d.Keywords) != "" {
		b = append(b, `,"keywords":`...)
		if b, err = appendString(b, d.Keywords); err != nil {
			return nil, fmt.Errorf("keywords: %w", err)
		}
	}
	if len(d.PrerequisiteToolIDs) > 0 {
		b = append(b, `,"prerequisiteToolIds":[`...)
		for i, id := range d.PrerequisiteToolIDs {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendString(b, id); err != nil {
				return nil, fmt.Errorf("prerequisiteToolIds: %w", err)
			}
		}
		b = append(b, ']')
	}
	return b, nil
}

// appendStatic appends the complete static definition object (definitions projection
// without definitionRevision), defaults omitted.
func appendStatic(b []byte, d *Definition, args, result jsontext.Value) ([]byte, error) {
	b, err := appendCommon(b, d)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"argumentsSchema":`...)
	b = append(b, args...)
	b = append(b, `,"resultSchema":`...)
	b = append(b, result...)
	if b, err = appendOptional(b, d); err != nil {
		return nil, err
	}
	if d.ArgumentEncoding == wire.ArgumentEncodingFlattenedString {
		b = append(b, `,"argumentEncoding":"`+wire.ArgumentEncodingFlattenedString+`"`...)
	}
	return append(b, '}'), nil
}

// appendStaticCanonical appends the static definition object in RFC 8785 form: members
// in sorted order, strings as appendString writes them, schemas already canonical.
func appendStaticCanonical(b []byte, d *Definition, args, result jsontext.Value) ([]byte, error) {
	var err error
	str := func(key, value string) {
		if err == nil {
			b = append(b, key...)
			b, err = appendString(b, value)
		}
	}
	b = append(b, '{')
	if d.ArgumentEncoding == wire.ArgumentEncodingFlattenedString {
		b = append(b, `"argumentEncoding":"`+wire.ArgumentEncodingFlattenedString+`",`...)
	}
	b = append(b, `"argumentsSchema":`...)
	b = append(b, args...)
	str(`,"category":`, d.Category)
	str(`,"description":`, d.Description)
	str(`,"id":`, d.ID)
	if strings.TrimSpace(d.Keywords) != "" {
		str(`,"keywords":`, d.Keywords)
	}
	str(`,"name":`, d.Name)
	str(`,"policy":`, string(d.Policy))
	if len(d.PrerequisiteToolIDs) > 0 {
		b = append(b, `,"prerequisiteToolIds":[`...)
		for i, id := range d.PrerequisiteToolIDs {
			if i > 0 {
				b = append(b, ',')
			}
			str("", id)
		}
		b = append(b, ']')
	}
	b = append(b, `,"resultSchema":`...)
	b = append(b, result...)
	return append(b, '}'), err
}

// appendIndexOpen appends the index entry without its closing brace.
func appendIndexOpen(b []byte, d *Definition, rev string) ([]byte, error) {
	b, err := appendCommon(b, d)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"definitionRevision":"`...)
	b = append(b, rev...)
	b = append(b, '"')
	return appendOptional(b, d)
}

// searchText is the normalized text that query terms must occur in: id, name,
// description, category, keywords and prerequisite ids, lower-cased, with every
// non-letter, non-digit as a space.
func searchText(d *Definition) string {
	parts := append([]string{d.ID, d.Name, d.Description, d.Category, d.Keywords}, d.PrerequisiteToolIDs...)
	return normalizeText(strings.Join(parts, " "))
}

func normalizeText(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return ' '
	}, s)
}

// queryTerms appends the distinct lower-case terms of free text to dst, with a set so that
// a long text costs linear time.
func queryTerms(dst []string, s string) []string {
	seen := make(map[string]bool, len(dst))
	for _, t := range dst {
		seen[t] = true
	}
	for f := range strings.FieldsSeq(normalizeText(s)) {
		if !seen[f] {
			seen[f] = true
			dst = append(dst, f)
		}
	}
	return dst
}
