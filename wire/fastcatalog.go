package wire

import (
	"math"
	"reflect"
	"strconv"

	"github.com/ansight-go/ansight/internal/jsonscan"
)

// A catalog answer is the largest payload a host decodes often: up to 1,000 tools with
// their schemas, half a megabyte of JSON. Like tool.call and tool.result (fastdecode.go)
// it is decoded by hand in the strict pass, and every string and schema of the catalog
// lands in one allocation each instead of one per value; the json package decodes only
// the few members that are small or rare (evaluatedAtUtc, categories, changes, an entry's
// runtime, executable and denial), from their own bytes, after the strict scan of them.
// Any member of an unexpected JSON kind (null, a number for a string) gives up with
// errSlowPath before the destination is touched. FuzzFastDecode holds the two paths
// against each other.

var (
	catalogShape   = shapeOf(reflect.TypeFor[Catalog]())
	toolEntryShape = shapeOf(reflect.TypeFor[ToolEntry]())
)

// Where a catalog's strings and schemas go: a span of an entry (entrySpans) or of the
// catalog's head (catalogState.head).
const (
	toolID uint8 = iota
	toolName
	toolDescription
	toolCategory
	toolKeywords
	toolArgumentEncoding
	toolDefinitionRevision
	toolArguments // ArgumentsSchema, a raw value
	toolResult    // ResultSchema, a raw value
	toolSpans

	catSchema uint8 = iota - toolSpans - 1
	catRevision
	catDetail
	catAvailabilityRevision
	catSpans
)

// span is where a string of a catalog is in s.strs (or a schema in s.cs.raws), waiting
// for the catalog's single allocation of each; empty when the member is absent (no raw
// value is empty). Int32s keep an entry's spans in 72 bytes; fastCatalog leaves
// inputs of 2 GiB and more to the generic path.
type span struct{ start, end int32 }

// entrySpans are the spans of one tools entry, by field (toolID…toolResult).
type entrySpans [toolSpans]span

// deferredID is a prerequisite id waiting in s.strs: ids elem of them all.
type deferredID struct {
	elem       int
	start, end int32
}

// catalogState is what readCatalog keeps in the scanner while it reads.
type catalogState struct {
	cat   *Catalog
	tool  int // the entry being read
	raws  []byte
	head  [catSpans]span
	spans []entrySpans // one for each entry of cat.Tools
	ids   []deferredID
	// prereqs counts the prerequisite ids read; lists says whose they are: every entry's
	// list is a piece of one slice of them all.
	prereqs int
	lists   []prereqList
	// first is where the first entry of tools starts, ends where each entry ends (for a
	// CatalogMemo).
	first int
	ends  []int
}

// prereqList is the prerequisite ids of one entry: elements start to end of all of them.
type prereqList struct{ tool, start, end int }

// fastCatalog is fastDecode of a *Catalog; the scanner is set on the input.
func (s *scanner) fastCatalog(dst *Catalog) error {
	if len(s.data) > math.MaxInt32 {
		return errSlowPath // spans are int32s
	}
	var c Catalog
	s.strs = s.strs[:0]
	s.cs = catalogState{cat: &c, raws: s.cs.raws[:0], spans: s.cs.spans[:0], ids: s.cs.ids[:0], lists: s.cs.lists[:0], ends: s.cs.ends[:0]}
	if err := s.fast(catalogShape, (*scanner).readCatalog); err != nil {
		return err
	}
	var strs string
	if len(s.strs) > 0 {
		strs = string(s.strs)
	}
	var raws []byte
	if len(s.cs.raws) > 0 {
		raws = append([]byte(nil), s.cs.raws...)
	}
	h := &s.cs.head
	c.Schema, c.Revision = strs[h[catSchema].start:h[catSchema].end], strs[h[catRevision].start:h[catRevision].end]
	c.Detail = strs[h[catDetail].start:h[catDetail].end]
	c.AvailabilityRevision = strs[h[catAvailabilityRevision].start:h[catAvailabilityRevision].end]
	for i, sp := range s.cs.spans[:len(c.Tools)] {
		e := &c.Tools[i]
		e.ID, e.Name = strs[sp[toolID].start:sp[toolID].end], strs[sp[toolName].start:sp[toolName].end]
		e.Description, e.Category = strs[sp[toolDescription].start:sp[toolDescription].end], strs[sp[toolCategory].start:sp[toolCategory].end]
		e.Keywords = strs[sp[toolKeywords].start:sp[toolKeywords].end]
		e.ArgumentEncoding = strs[sp[toolArgumentEncoding].start:sp[toolArgumentEncoding].end]
		e.DefinitionRevision = strs[sp[toolDefinitionRevision].start:sp[toolDefinitionRevision].end]
		if a := sp[toolArguments]; a.end > a.start {
			e.ArgumentsSchema = raws[a.start:a.end:a.end]
		}
		if r := sp[toolResult]; r.end > r.start {
			e.ResultSchema = raws[r.start:r.end:r.end]
		}
	}
	if len(s.cs.lists) > 0 {
		prereqs := make([]string, s.cs.prereqs)
		for _, l := range s.cs.lists {
			c.Tools[l.tool].PrerequisiteToolIDs = prereqs[l.start:l.end:l.end]
		}
		for _, d := range s.cs.ids {
			prereqs[d.elem] = strs[d.start:d.end]
		}
	}
	*dst = c
	return nil
}

// appendString reads a string member into s.strs; anything else takes the slow path.
func (s *scanner) appendString() (span, error) {
	if s.js.Peek() != '"' {
		return span{}, errSlowPath
	}
	raw, escaped, err := s.js.String()
	if err != nil {
		return span{}, err
	}
	start := len(s.strs)
	if escaped {
		s.strs = jsonscan.AppendUnescaped(s.strs, raw[1:len(raw)-1])
	} else {
		s.strs = append(s.strs, raw[1:len(raw)-1]...)
	}
	return span{int32(start), int32(len(s.strs))}, nil
}

// entryString reads a string member of the entry being read into s.strs, for field.
func (s *scanner) entryString(field uint8) (err error) {
	s.cs.spans[s.cs.tool][field], err = s.appendString()
	return err
}

// entryRaw copies the value of a member of the entry being read into s.cs.raws, for field.
func (s *scanner) entryRaw(field uint8) error {
	v, ok := s.js.QuickValue() // a schema's objects are small
	if !ok {
		var err error
		if v, err = s.js.Value(); err != nil {
			return err
		}
	}
	start := len(s.cs.raws)
	s.cs.raws = append(s.cs.raws, v...)
	s.cs.spans[s.cs.tool][field] = span{int32(start), int32(len(s.cs.raws))}
	return nil
}

// decodeMember scans the value of field f strictly by its shape, then has the json
// package decode those bytes into v: for members that are small or rare.
func (s *scanner) decodeMember(f *field, v any) error {
	s.js.Peek()
	start := s.js.Pos()
	if err := s.value(f.shape); err != nil {
		return err
	}
	return decodeChecked(s.data[start:s.js.Pos()], v)
}

// integer reads a JSON integer that fits an int; anything else takes the slow path.
func (s *scanner) integer() (*int, error) {
	if c := s.js.Peek(); c != '-' && (c < '0' || c > '9') {
		return nil, errSlowPath
	}
	v, err := s.js.Value()
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return nil, errSlowPath // a fraction, an exponent or out of range
	}
	return &n, nil
}

// boolean reads true or false; anything else takes the slow path.
func (s *scanner) boolean(dst *bool) error {
	switch s.js.Peek() {
	case 't':
		*dst = true
	case 'f':
		*dst = false
	default:
		return errSlowPath
	}
	return s.js.Skip()
}

func (s *scanner) readCatalog(f *field) error {
	c := s.cs.cat
	var err error
	switch string(f.name) {
	case "schema":
		s.cs.head[catSchema], err = s.appendString()
		return err
	case "revision":
		s.cs.head[catRevision], err = s.appendString()
		return err
	case "detail":
		s.cs.head[catDetail], err = s.appendString()
		return err
	case "availabilityRevision":
		s.cs.head[catAvailabilityRevision], err = s.appendString()
		return err
	case "unchanged":
		return s.boolean(&c.Unchanged)
	case "count":
		c.Count, err = s.integer()
		return err
	case "totalCount":
		c.TotalCount, err = s.integer()
		return err
	case "tools":
		return s.readTools()
	case "evaluatedAtUtc":
		return s.decodeMember(f, &c.EvaluatedAtUtc)
	case "categories":
		return s.decodeMember(f, &c.Categories)
	case "changes":
		return s.decodeMember(f, &c.Changes)
	}
	return errSlowPath
}

// readTools reads the tools array, each entry an object.
func (s *scanner) readTools() error {
	c := s.cs.cat
	if s.js.Peek() != '[' {
		return errSlowPath
	}
	if err := s.js.EnterArray(); err != nil {
		return err
	}
	n := min(len(s.data)/256, 1024)
	if s.tools > 0 {
		n = min(s.tools, len(s.data)/2) // each entry two bytes at least
	}
	c.Tools = make([]ToolEntry, 0, n)
	for i := 0; ; i++ {
		more, err := s.js.Element(i)
		if err != nil || !more {
			return err
		}
		if s.js.Peek() != '{' {
			return errSlowPath
		}
		c.Tools = append(c.Tools, ToolEntry{})
		s.cs.spans = append(s.cs.spans, entrySpans{})
		s.cs.tool = i
		if i == 0 {
			s.cs.first = s.js.Pos()
		}
		if !s.canonicalEntry() {
			if err := s.members(toolEntryShape, (*scanner).readToolEntry); err != nil {
				return inPath(err, strconv.Itoa(i))
			}
		}
		s.cs.ends = append(s.cs.ends, s.js.Pos())
	}
}

func (s *scanner) readToolEntry(f *field) error {
	e := &s.cs.cat.Tools[s.cs.tool]
	switch string(f.name) {
	case "id":
		return s.entryString(toolID)
	case "name":
		return s.entryString(toolName)
	case "description":
		return s.entryString(toolDescription)
	case "category":
		return s.entryString(toolCategory)
	case "keywords":
		return s.entryString(toolKeywords)
	case "argumentEncoding":
		return s.entryString(toolArgumentEncoding)
	case "definitionRevision":
		return s.entryString(toolDefinitionRevision)
	case "argumentsSchema":
		return s.entryRaw(toolArguments)
	case "resultSchema":
		return s.entryRaw(toolResult)
	case "policy":
		if s.js.Peek() != '"' {
			return errSlowPath
		}
		raw, escaped, err := s.js.String()
		if err != nil {
			return err
		}
		for _, p := range [...]Policy{PolicyRead, PolicyWrite, PolicyCritical} {
			if !escaped && string(raw[1:len(raw)-1]) == string(p) {
				e.Policy = p
				return nil
			}
		}
		p, perr := ParsePolicy(string(unquote(raw, escaped))) // another case, "delete"
		if perr != nil {
			return errSlowPath // the json package words the error
		}
		e.Policy = p
		return nil
	case "prerequisiteToolIds":
		if s.js.Peek() != '[' {
			return errSlowPath
		}
		if err := s.js.EnterArray(); err != nil {
			return err
		}
		l := prereqList{tool: s.cs.tool, start: s.cs.prereqs}
		for i := 0; ; i++ {
			more, err := s.js.Element(i)
			if err != nil {
				return err
			}
			if !more {
				l.end = s.cs.prereqs
				s.cs.lists = append(s.cs.lists, l)
				return nil
			}
			sp, err := s.appendString()
			if err != nil {
				return inPath(err, strconv.Itoa(i))
			}
			s.cs.ids = append(s.cs.ids, deferredID{elem: s.cs.prereqs, start: sp.start, end: sp.end})
			s.cs.prereqs++
		}
	case "runtime":
		return s.decodeMember(f, &e.Runtime)
	case "executable":
		return s.decodeMember(f, &e.Executable)
	case "denial":
		return s.decodeMember(f, &e.Denial)
	}
	return errSlowPath
}

// A tools entry is read first in the form an app writes it: its members in the order of
// ToolEntry's fields, each at most once, every name exactly a field's, plain and right
// after the '{' or the ',' before it. The strict checks on its names then hold by
// construction — a name taken only after the one before in that order cannot repeat,
// and a field's exact name is no case variant of another (toolEntryShape.foldDistinct) —
// and each name costs a comparison instead of the member machinery. The values are read
// as members reads them (readToolEntry, through the scanner). Anything else — another
// order, an unknown member, an escape in a name, a space, any error — gives up with the
// scanner and the catalog as they were before the entry, and members reads the entry
// from its '{': it alone accepts what the form does not take, and words the errors.

// canonicalEntry reads the tools entry at the scanner's '{', s.cs.cat.Tools's last, in
// its canonical form; false, everything as it was, when it is not in that form.
func (s *scanner) canonicalEntry() bool {
	if !toolEntryShape.foldDistinct {
		return false
	}
	m := s.js.Mark()
	strs, raws, ids, prereqs, lists := len(s.strs), len(s.cs.raws), len(s.cs.ids), s.cs.prereqs, len(s.cs.lists)
	if s.canonicalMembers() {
		return true
	}
	s.js.Rewind(m)
	s.strs, s.cs.raws, s.cs.prereqs = s.strs[:strs], s.cs.raws[:raws], prereqs
	s.cs.ids, s.cs.lists = s.cs.ids[:ids], s.cs.lists[:lists]
	s.cs.cat.Tools[s.cs.tool], s.cs.spans[s.cs.tool] = ToolEntry{}, entrySpans{}
	return false
}

func (s *scanner) canonicalMembers() bool {
	if s.js.EnterObject() != nil {
		return false
	}
	fields := toolEntryShape.fields
	k := 0 // the field after the last one read
	for i := 0; ; i++ {
		if s.js.Peek() == '}' {
			_, more, err := s.js.Member(i)
			return err == nil && !more
		}
		name, ok := s.js.UncheckedMember(i)
		if !ok {
			return false
		}
		for k < len(fields) && string(fields[k].name) != string(name) {
			k++
		}
		if k == len(fields) {
			return false
		}
		if s.readToolEntry(&fields[k]) != nil {
			return false
		}
		k++
	}
}
