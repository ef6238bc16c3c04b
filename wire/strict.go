package wire

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/ansight-go/ansight/internal/jsonscan"
)

// scanner makes the strict checks in one pass over an in-memory input, before the json
// package decodes it. internal/jsonscan refuses malformed JSON, invalid UTF-8, duplicate
// names and nesting deeper than MaxDepth; the scanner adds, in an object decoded into a Go
// struct, a name that matches a field only under Unicode case folding, and two names
// equal under case folding.
//
// Objects whose names are data — Go maps (categories, changes, evidence) and free-form
// values (arguments, results) — may hold names that differ only by case: tool ids are
// case-sensitive, and a result may list "Makefile" and "makefile". Such a value is checked
// for field-name variants when it is decoded into its own struct (a typed tool's
// arguments), and closed-object schemas refuse the unknown variant of a property.
//
// Scanners are pooled with their buffers, so a scan does not allocate for inputs with
// small objects.
type scanner struct {
	js   jsonscan.Scanner
	data []byte

	// strs and deferred collect an envelope's string members (see envelopeString).
	strs     []byte
	deferred []deferredString

	// tools is how many tools entries a catalog's caller expects (a CatalogMemo's skeleton,
	// whose entries are mostly two bytes), 0 when it does not know.
	tools int

	// env, call and result are where DecodeEnvelope and fastDecode build their value.
	env    Envelope
	call   Call
	result Result
	// interned caches short strings fastDecode made (see intern).
	interned [61]string
	// alias: raw values are sub-slices of the input, not copies (UnmarshalResultPayload).
	alias bool
	// lean, set by DecodeResponseInto, takes the envelope's id and replyTo into leanOut
	// instead of strings (see envelopeString).
	lean    bool
	leanOut leanStrings
	// fuseCall and fuseResult ask DecodeEnvelopeInto's payload pass to decode a tool.call
	// or tool.result payload; fused reports that it did (into call or result).
	fuseCall, fuseResult, fused bool
	// cs is the catalog fastCatalog reads (its strings go to strs).
	cs catalogState
}

// foldSetThreshold is the object size from which names are checked against a set of
// folded names instead of pairwise, so that a huge object cannot make the check
// quadratic.
const foldSetThreshold = 16

var scanners = sync.Pool{New: func() any { return new(scanner) }}

func getScanner(data []byte) *scanner {
	s := scanners.Get().(*scanner)
	s.data = data
	s.js.Reset(data, MaxDepth)
	return s
}

// put drops every reference to the input and returns s to the pool.
func (s *scanner) put() {
	s.js.Release()
	s.data = nil
	s.clearDecoded()
	if cap(s.strs) > 1<<20 { // do not pin the buffer of a huge id; a catalog's strings fit
		s.strs = nil
	}
	s.fuseCall, s.fuseResult, s.lean = false, false, false
	// A catalog's scratch is kept up to a large catalog's size, to read the next one.
	raws, spans, ids, lists, ends := s.cs.raws[:0], s.cs.spans[:0], s.cs.ids[:0], s.cs.lists[:0], s.cs.ends[:0]
	if cap(raws) > 1<<20 || cap(spans) > 1<<12 || cap(ids) > 1<<14 || cap(lists) > 1<<12 || cap(ends) > 1<<14 {
		raws, spans, ids, lists, ends = nil, nil, nil, nil, nil
	}
	s.cs = catalogState{raws: raws, spans: spans, ids: ids, lists: lists, ends: ends}
	scanners.Put(s)
}

// clearDecoded drops what a decoding left in s (its strings, deferred values, envelope,
// payloads and flags), keeping what it was asked to decode (fuseCall, fuseResult, lean):
// for the pool, and for a reading that gives up to start over (canonicalEnvelope).
func (s *scanner) clearDecoded() {
	s.strs = s.strs[:0]
	clear(s.deferred)
	s.deferred = s.deferred[:0]
	s.env, s.call, s.result = Envelope{}, Call{}, Result{}
	s.leanOut = leanStrings{}
	s.fused, s.alias = false, false
}

// tooLarge is the refusal of an input above DefaultMaxMessageBytes; what names it
// ("message", "input").
func tooLarge(what string, n int) error {
	return decodeError("", -1, what+" of "+strconv.Itoa(n)+" bytes exceeds the limit of "+strconv.Itoa(DefaultMaxMessageBytes))
}

// scanStrict scans data, which must be exactly one JSON value, against sh (nil: any JSON).
// It applies no size limit: the callers do, or inflated payloads have their own.
func scanStrict(data []byte, sh *shape) error {
	s := getScanner(data)
	defer s.put()
	if err := s.value(sh); err != nil {
		return asDecodeError(err)
	}
	return s.end()
}

// end checks that nothing but whitespace follows the top-level value.
func (s *scanner) end() error {
	if err := s.js.End(); err != nil {
		return asDecodeError(err)
	}
	return nil
}

// value scans one JSON value of shape sh. Its errors are *jsonscan.Error or *DecodeError
// with a path relative to the value (see inPath); the caller's asDecodeError finishes
// them.
func (s *scanner) value(sh *shape) error {
	if sh != nil {
		switch s.js.Peek() {
		case '{':
			return s.object(sh)
		case '[':
			return s.array(sh)
		}
	}
	return s.js.Skip()
}

// inPath records that the value err was found in sits under seg (a member name or an
// index) of its container.
func inPath(err error, seg string) error {
	switch e := err.(type) {
	case *jsonscan.Error:
		e.In(seg)
	case *DecodeError:
		e.Path = "/" + strings.ReplaceAll(strings.ReplaceAll(seg, "~", "~0"), "/", "~1") + e.Path
	}
	return err
}

func (s *scanner) array(sh *shape) error {
	if err := s.js.EnterArray(); err != nil {
		return err
	}
	var elem *shape
	if !sh.isObj {
		elem = sh.elem
	}
	for i := 0; ; i++ {
		more, err := s.js.Element(i)
		if err != nil || !more {
			return err
		}
		if err := s.value(elem); err != nil {
			return inPath(err, strconv.Itoa(i))
		}
	}
}

func (s *scanner) object(sh *shape) error {
	if sh.isObj {
		return s.members(sh, readField)
	}
	if err := s.js.EnterObject(); err != nil { // a map: names are data
		return err
	}
	for i := 0; ; i++ {
		name, more, err := s.js.Member(i)
		if err != nil || !more {
			return err
		}
		if err := s.value(sh.elem); err != nil {
			return inPath(err, string(name))
		}
	}
}

// readField scans a struct field's value by its shape.
func readField(s *scanner, f *field) error { return s.value(f.shape) }

// checkFoldUnlessExact refuses name, field f's or no field's (f nil), if it equals an
// earlier name of the same struct-shaped object under case folding. The check is skipped
// while every name, this one included, is exactly a field's name and the fields' names
// are distinct under case folding (sh.foldDistinct): two such names cannot be equal under
// folding, as jsonscan has refused exact duplicates. That is the common case, and it
// saves comparing each name with all before it.
func (s *scanner) checkFoldUnlessExact(sh *shape, f *field, name []byte, allExact *bool, folded *map[string]struct{}, at int) error {
	*allExact = *allExact && f != nil && bytes.Equal(f.name, name)
	if *allExact && sh.foldDistinct {
		return nil
	}
	return s.checkFold(name, s.js.NumNames()-1, folded, at)
}

// checkFold refuses name if one of the prev names read before it in the same object
// equals it under case folding. Exact duplicates never get here: jsonscan refuses them
// first.
func (s *scanner) checkFold(name []byte, prev int, folded *map[string]struct{}, at int) error {
	if prev < foldSetThreshold {
		for i := range prev {
			if p := s.js.Name(i); bytes.EqualFold(p, name) {
				return foldError(p, name, at)
			}
		}
		return nil
	}
	if *folded == nil {
		*folded = make(map[string]struct{}, 2*prev)
		for i := range prev {
			(*folded)[string(appendFold(nil, s.js.Name(i)))] = struct{}{}
		}
	}
	var buf [64]byte
	key := appendFold(buf[:0], name)
	if _, dup := (*folded)[string(key)]; dup {
		for i := range prev {
			if p := s.js.Name(i); bytes.EqualFold(p, name) {
				return foldError(p, name, at)
			}
		}
	}
	(*folded)[string(key)] = struct{}{}
	return nil
}

func foldError(prev, name []byte, at int) error {
	return decodeError("/"+string(name), int64(at),
		"object keys "+strconv.Quote(string(prev))+" and "+strconv.Quote(string(name))+" differ only by case")
}

// unquote returns the contents of a raw JSON string that jsonscan accepted, unescaped;
// without escapes it is a sub-slice of raw.
func unquote(raw []byte, escaped bool) []byte {
	if !escaped {
		return raw[1 : len(raw)-1]
	}
	return jsonscan.AppendUnescaped(nil, raw[1:len(raw)-1])
}

// appendFold appends the case-folded form of b: two names have the same folded form
// exactly when bytes.EqualFold reports them equal (every rune is replaced by the smallest
// rune of its simple case-folding orbit, as encoding/json v1 matches names).
func appendFold(dst, b []byte) []byte {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		dst = utf8.AppendRune(dst, foldRune(r))
		i += n
	}
	return dst
}

// foldRune returns the smallest rune of r's simple case-folding orbit.
func foldRune(r rune) rune {
	smallest := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		smallest = min(smallest, f)
	}
	return smallest
}
