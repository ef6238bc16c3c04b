package wire

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// scanner makes the strict checks in one token pass over an in-memory input, before the
// json package decodes it (jsontext itself refuses malformed JSON, invalid UTF-8 and
// exact duplicate names). It adds what jsontext does not check:
//   - nesting deeper than MaxDepth;
//   - in an object decoded into a Go struct: a name that matches a field only under
//     Unicode case folding, and two names equal under case folding.
//
// Objects whose names are data — Go maps (categories, changes, evidence) and free-form
// values (arguments, results) — may hold names that differ only by case: tool ids are
// case-sensitive, and a result may list "Makefile" and "makefile". Such a value is checked
// for field-name variants when it is decoded into its own struct (a typed tool's
// arguments), and closed-object schemas refuse the unknown variant of a property.
//
// Scanners are pooled: the jsontext.Decoder and the name stack are reused, so a scan does
// not allocate for inputs with small objects.
type scanner struct {
	dec  jsontext.Decoder
	src  bytes.Buffer // wraps the input so that dec parses it in place, without copying
	data []byte

	// names holds the unescaped names of every open struct-shaped object, innermost last.
	names [][]byte
	// walking is set while a value without shape is scanned token by token (see
	// freeValue).
	walking bool

	// strs and deferred collect an envelope's string members (see envelopeString).
	strs     []byte
	deferred []deferredString
}

// foldSetThreshold is the object size from which names are checked against a set of
// folded names instead of pairwise, so that a huge object cannot make the check
// quadratic.
const foldSetThreshold = 16

var scanners = sync.Pool{New: func() any { return new(scanner) }}

func getScanner(data []byte) *scanner {
	s := scanners.Get().(*scanner)
	s.data = data
	s.src = *bytes.NewBuffer(data)
	s.dec.Reset(&s.src)
	return s
}

// put drops every reference to the input and returns s to the pool.
func (s *scanner) put() {
	s.src = bytes.Buffer{}
	s.dec.Reset(&s.src)
	clear(s.names[:cap(s.names)])
	s.names = s.names[:0]
	s.data = nil
	s.walking = false
	s.strs = s.strs[:0]
	if cap(s.strs) > 4<<10 { // do not pin the buffer of a huge id
		s.strs = nil
	}
	clear(s.deferred)
	s.deferred = s.deferred[:0]
	scanners.Put(s)
}

// checkStrict scans data, which must be exactly one JSON value, against sh (nil: any JSON).
func checkStrict(data []byte, sh *shape) error {
	if len(data) > DefaultMaxMessageBytes {
		return decodeError("", -1, "input of "+strconv.Itoa(len(data))+" bytes exceeds the limit of "+strconv.Itoa(DefaultMaxMessageBytes))
	}
	return scanStrict(data, sh)
}

// scanStrict is checkStrict without the input size limit.
func scanStrict(data []byte, sh *shape) error {
	s := getScanner(data)
	defer s.put()
	if err := s.value(sh); err != nil {
		return err
	}
	return s.end()
}

// end checks that nothing but whitespace follows the top-level value.
func (s *scanner) end() error {
	if _, err := s.dec.ReadToken(); err == nil {
		return decodeError("", s.dec.InputOffset(), "unexpected data after the top-level JSON value")
	} else if !errors.Is(err, io.EOF) {
		return asDecodeError(err)
	}
	return nil
}

// value scans one JSON value of shape sh.
func (s *scanner) value(sh *shape) error {
	if sh == nil && !s.walking {
		return s.freeValue()
	}
	tok, err := s.dec.ReadToken()
	if err != nil {
		return asDecodeError(err)
	}
	switch tok.Kind() {
	case '{':
		return s.object(sh)
	case '[':
		return s.array(sh)
	}
	return nil
}

// freeValue scans a value whose names are data (no shape): jsontext checks its syntax,
// UTF-8 and duplicate names in one pass, far cheaper than token by token, and only the
// depth is left to check. A bracket count over the raw bytes tells whether the value could
// be too deep; only then is it walked token by token (once: walking is set for its whole
// subtree), which reports where.
func (s *scanner) freeValue() error {
	// Each level takes an opening bracket: what remains of a short input cannot be too deep.
	rest := s.data[s.dec.InputOffset():]
	if depth := s.dec.StackDepth(); depth+len(rest) <= MaxDepth || depth+nesting(rest) <= MaxDepth {
		_, err := s.dec.ReadValue()
		return asDecodeError(err)
	}
	s.walking = true
	defer func() { s.walking = false }()
	return s.value(nil)
}

// nesting returns how deeply the JSON value at the start of b (after whitespace and
// separators) nests objects and arrays. b need not be valid JSON: the count is exact over
// any valid prefix, and that is all a tokenizer reads before it fails.
func nesting(b []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(b); i++ {
		switch nestingClass[b[i]] {
		case nestOpen:
			depth++
			deepest = max(deepest, depth)
		case nestClose:
			depth--
			if depth <= 0 {
				return deepest
			}
		case nestQuote:
			i = stringEnd(b, i+1)
			if depth == 0 {
				return 0
			}
		case nestScalar:
			if depth == 0 {
				return 0 // a number or a literal
			}
		}
	}
	return deepest
}

// stringEnd returns the index of the quote closing the string whose contents start at
// b[i:], or len(b).
func stringEnd(b []byte, i int) int {
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		i += j
		escapes := 0
		for k := i - 1; k >= 0 && b[k] == '\\'; k-- {
			escapes++
		}
		if escapes%2 == 0 {
			return i
		}
		i++
	}
}

// The byte classes nesting tells apart; whitespace and separators are nestSkip.
const (
	nestScalar = iota // anything that starts a number or a literal
	nestSkip
	nestOpen
	nestClose
	nestQuote
)

var nestingClass = func() (t [256]uint8) {
	for _, c := range []byte(" \t\r\n:,") {
		t[c] = nestSkip
	}
	t['{'], t['['] = nestOpen, nestOpen
	t['}'], t[']'] = nestClose, nestClose
	t['"'] = nestQuote
	return t
}()

// trimSeparators drops the whitespace and the name separator before a value's bytes.
func trimSeparators(b []byte) []byte {
	for len(b) > 0 && nestingClass[b[0]] == nestSkip {
		b = b[1:]
	}
	return b
}

// checkDepth refuses an object or array that was just opened beyond MaxDepth.
func (s *scanner) checkDepth() error {
	if s.dec.StackDepth() > MaxDepth {
		return decodeError(string(s.dec.StackPointer()), s.dec.InputOffset()-1,
			"JSON nesting exceeds the maximum depth of "+strconv.Itoa(MaxDepth))
	}
	return nil
}

func (s *scanner) array(sh *shape) error {
	if err := s.checkDepth(); err != nil {
		return err
	}
	var elem *shape
	if sh != nil && !sh.isObj {
		elem = sh.elem
	}
	for s.dec.PeekKind() != ']' {
		if err := s.value(elem); err != nil {
			return err
		}
	}
	_, err := s.dec.ReadToken()
	return asDecodeError(err)
}

func (s *scanner) object(sh *shape) error {
	if err := s.checkDepth(); err != nil {
		return err
	}
	start := len(s.names)
	defer func() {
		clear(s.names[start:])
		s.names = s.names[:start]
	}()
	var folded map[string]struct{} // built once the object has foldSetThreshold names
	allExact := true               // every name so far is exactly a field's (see checkFoldUnlessExact)
	for s.dec.PeekKind() != '}' {
		raw, err := s.dec.ReadValue() // the name, quoted; jsontext refuses a non-string here
		if err != nil {
			return asDecodeError(err)
		}
		offset := s.dec.InputOffset() - int64(len(raw))
		name, err := unquoteName(raw)
		if err != nil {
			return asDecodeError(err)
		}
		var next *shape
		switch {
		case sh == nil:
		case sh.isObj:
			f, variant := sh.lookup(name)
			if err := s.checkFoldUnlessExact(sh, f, name, start, &allExact, &folded, offset); err != nil {
				return err
			}
			if variant {
				return decodeError(string(s.dec.StackPointer()), offset,
					"object key "+strconv.Quote(string(name))+" differs from the field name "+
						strconv.Quote(string(f.name))+" only by case")
			}
			if f != nil {
				next = f.shape
			}
		default:
			next = sh.elem
		}
		if err := s.value(next); err != nil {
			return err
		}
	}
	_, err := s.dec.ReadToken()
	return asDecodeError(err)
}

// checkFoldUnlessExact records name, field f's or no field's (f nil), among the names of
// the struct-shaped object that starts at s.names[start], and refuses it if it equals an
// earlier one under case folding. The check is skipped while every name, this one
// included, is exactly a field's name and the fields' names are distinct under case
// folding (sh.foldDistinct): two such names cannot be equal under folding, as jsontext
// has refused exact duplicates. That is the common case, and it saves comparing each name
// with all before it.
func (s *scanner) checkFoldUnlessExact(sh *shape, f *field, name []byte, start int, allExact *bool, folded *map[string]struct{}, offset int64) error {
	*allExact = *allExact && f != nil && bytes.Equal(f.name, name)
	if !*allExact || !sh.foldDistinct {
		if err := s.checkFold(name, start, folded, offset); err != nil {
			return err
		}
	}
	s.names = append(s.names, name)
	return nil
}

// checkFold refuses name if an earlier name of the same object (s.names[start:]) equals it
// under case folding. Exact duplicates never get here: jsontext refuses them first.
func (s *scanner) checkFold(name []byte, start int, folded *map[string]struct{}, offset int64) error {
	prev := s.names[start:]
	if len(prev) < foldSetThreshold {
		for _, p := range prev {
			if bytes.EqualFold(p, name) {
				return s.foldError(p, name, offset)
			}
		}
		return nil
	}
	if *folded == nil {
		*folded = make(map[string]struct{}, 2*len(prev))
		for _, p := range prev {
			(*folded)[string(appendFold(nil, p))] = struct{}{}
		}
	}
	var buf [64]byte
	key := appendFold(buf[:0], name)
	if _, dup := (*folded)[string(key)]; dup {
		for _, p := range prev {
			if bytes.EqualFold(p, name) {
				return s.foldError(p, name, offset)
			}
		}
	}
	(*folded)[string(key)] = struct{}{}
	return nil
}

func (s *scanner) foldError(prev, name []byte, offset int64) error {
	return decodeError(string(s.dec.StackPointer()), offset,
		"object keys "+strconv.Quote(string(prev))+" and "+strconv.Quote(string(name))+" differ only by case")
}

// unquoteName returns the unescaped name; without escapes it is a sub-slice of the input
// (jsontext has already validated the string and its UTF-8).
func unquoteName(raw []byte) ([]byte, error) {
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1], nil
	}
	return jsontext.AppendUnquote(nil, raw)
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
