package jsonscan

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// Scanner reads one JSON text. The zero value is ready for Reset; a Scanner may be reused
// for any number of inputs and keeps its buffers, so pooled scanners do not allocate.
type Scanner struct {
	data     []byte
	pos      int
	depth    int
	maxDepth int

	// names holds the (unescaped) member names of every open object, innermost last, as
	// places in the input or in scratch (no pointers: appending them costs the collector
	// nothing); starts[k] is where the k-th open object's names begin. sets[k] is the k-th
	// object's name set once it has setThreshold names, so that a huge object cannot make
	// the duplicate check quadratic.
	names   []nameRef
	starts  []int
	sets    []map[string]struct{}
	scratch []byte // unescaped names
	nameAt  int    // offset of the last name Member read
}

// nameRef is where a name is: data[off:off+n], or scratch[off:off+n] when escaped.
type nameRef struct {
	off, n  int
	escaped bool
}

func (s *Scanner) name(r nameRef) []byte {
	if r.escaped {
		return s.scratch[r.off : r.off+r.n]
	}
	return s.data[r.off : r.off+r.n]
}

// setThreshold is the object size from which names are checked against a set instead of
// one by one.
const setThreshold = 16

// Reset starts reading data, allowing at most maxDepth nested objects and arrays.
func (s *Scanner) Reset(data []byte, maxDepth int) {
	s.data, s.pos, s.depth, s.maxDepth = data, 0, 0, maxDepth
	s.names = s.names[:0]
	s.starts = s.starts[:0]
	clear(s.sets)
	s.sets = s.sets[:0]
	s.scratch = s.scratch[:0]
	if cap(s.scratch) > 4<<10 { // do not pin the buffer of a huge name
		s.scratch = nil
	}
}

// Release drops every reference to the input, for a scanner going back to a pool.
func (s *Scanner) Release() {
	s.Reset(nil, 0)
	if cap(s.names) > 1024 { // do not keep the stack of a huge object for every later input
		s.names, s.starts, s.sets = nil, nil, nil
	}
}

// Mark is a place in the input a Scanner can go back to (Rewind): a reader may try one
// way of reading a value and, when it gives up halfway, read the value again another way.
type Mark struct {
	pos, depth, names, starts, scratch int
}

// Mark returns the scanner's current place.
func (s *Scanner) Mark() Mark {
	return Mark{pos: s.pos, depth: s.depth, names: len(s.names), starts: len(s.starts), scratch: len(s.scratch)}
}

// Rewind goes back to m, a Mark of the same input taken while the objects and arrays open
// now and at m were the same or m's enclosed them: everything read since m is forgotten
// (names recorded in objects entered since, the names read since in the object open at
// m).
func (s *Scanner) Rewind(m Mark) {
	s.pos, s.depth = m.pos, m.depth
	s.names = s.names[:m.names]
	clear(s.sets[m.starts:])
	s.starts, s.sets = s.starts[:m.starts], s.sets[:m.starts]
	if k := m.starts - 1; k >= 0 && s.sets[k] != nil { // m's object had become a set
		s.sets[k] = nil
		if n := len(s.names) - s.starts[k]; n >= setThreshold {
			set := make(map[string]struct{}, 2*n)
			for _, p := range s.names[s.starts[k]:] {
				set[string(s.name(p))] = struct{}{}
			}
			s.sets[k] = set
		}
	}
	s.scratch = s.scratch[:m.scratch]
}

// Pos returns the offset of the next byte to read.
func (s *Scanner) Pos() int { return s.pos }

// Depth returns how many objects and arrays are open.
func (s *Scanner) Depth() int { return s.depth }

// Peek skips whitespace and returns the next byte without consuming it, or 0 at the end
// of the input.
func (s *Scanner) Peek() byte {
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; c {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return c
		}
	}
	return 0
}

// End checks that nothing but whitespace remains.
func (s *Scanner) End() error {
	if s.Peek(); s.pos < len(s.data) {
		return s.fail(s.pos, "invalid character "+quoteByte(s.data[s.pos])+" after the top-level value")
	}
	return nil
}

// Value validates the value that starts at the next non-space byte and returns its bytes.
func (s *Scanner) Value() ([]byte, error) {
	c := s.Peek()
	start := s.pos
	if err := s.value(c); err != nil {
		return nil, err
	}
	return s.data[start:s.pos], nil
}

// QuickValue is Value for a value whose objects are small: it returns ok false, the
// scanner where it was, when the value holds an object of more than quickNames members, a
// member name that is not plain (an escape, a byte above 0x7f) or anything Value refuses;
// Value then reads it and words any error. Names are compared one by one, without the
// bookkeeping of Member, and a string value without escapes costs one skipPlain: a
// catalog's schemas, read this way, cost about half as much. It takes nothing Value
// refuses (FuzzQuickValue).
func (s *Scanner) QuickValue() (v []byte, ok bool) {
	s.Peek()
	start, depth, names := s.pos, s.depth, len(s.names)
	if s.quick() {
		return s.data[start:s.pos], true
	}
	s.pos, s.depth, s.names = start, depth, s.names[:names]
	return nil, false
}

// quickNames is the most members an object may have for QuickValue.
const quickNames = 16

// quick validates the value at the next non-space byte; false when it cannot (see
// QuickValue), the scanner then somewhere in the value.
func (s *Scanner) quick() bool {
	switch c := s.Peek(); c {
	case '{':
		return s.quickObject()
	case '[':
		if s.depth >= s.maxDepth {
			return false
		}
		s.pos++
		s.depth++
		for i := 0; ; i++ {
			c := s.Peek()
			if c == ']' {
				s.pos++
				s.depth--
				return true
			}
			if i > 0 {
				if c != ',' {
					return false
				}
				s.pos++
			}
			if !s.quick() {
				return false
			}
		}
	case '"':
		if i := skipPlain(s.data, s.pos+1); i < len(s.data) && s.data[i] == '"' {
			s.pos = i + 1
			return true
		}
		_, _, err := s.str()
		return err == nil
	case 't':
		return s.literal("true") == nil
	case 'f':
		return s.literal("false") == nil
	case 'n':
		return s.literal("null") == nil
	default:
		return (c == '-' || c >= '0' && c <= '9') && s.number() == nil
	}
}

// quickObject is quick of the object at s.pos. Its names are kept in s.names above every
// open object's, as places in the input, while it is open.
func (s *Scanner) quickObject() bool {
	if s.depth >= s.maxDepth {
		return false
	}
	data := s.data
	s.pos++
	s.depth++
	base := len(s.names)
	for i := 0; ; i++ {
		c := s.Peek()
		if c == '}' {
			s.pos++
			s.depth--
			s.names = s.names[:base]
			return true
		}
		if i > 0 {
			if c != ',' {
				return false
			}
			s.pos++
			c = s.Peek()
		}
		if c != '"' || i == quickNames {
			return false
		}
		p := s.pos + 1
		e := skipPlain(data, p)
		if e >= len(data) || data[e] != '"' {
			return false
		}
		name := data[p:e]
		for _, r := range s.names[base:] {
			if r.n == len(name) && string(data[r.off:r.off+r.n]) == string(name) {
				return false
			}
		}
		s.names = append(s.names, nameRef{off: p, n: len(name)})
		s.pos = e + 1
		if s.Peek() != ':' {
			return false
		}
		s.pos++
		if !s.quick() {
			return false
		}
	}
}

// Skip validates the next value like Value, without returning it.
func (s *Scanner) Skip() error { return s.value(s.Peek()) }

func (s *Scanner) value(c byte) error {
	switch c {
	case '{':
		return s.object()
	case '[':
		return s.array()
	case '"':
		_, _, err := s.str()
		return err
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	}
	if c == '-' || c >= '0' && c <= '9' {
		return s.number()
	}
	return s.unexpected("the start of a value")
}

func (s *Scanner) object() error {
	if err := s.EnterObject(); err != nil {
		return err
	}
	for i := 0; ; i++ {
		name, more, err := s.Member(i)
		if err != nil || !more {
			return err
		}
		if err := s.value(s.Peek()); err != nil {
			return within(err, string(name))
		}
	}
}

func (s *Scanner) array() error {
	if err := s.EnterArray(); err != nil {
		return err
	}
	for i := 0; ; i++ {
		more, err := s.Element(i)
		if err != nil || !more {
			return err
		}
		if err := s.value(s.Peek()); err != nil {
			return within(err, strconv.Itoa(i))
		}
	}
}

// EnterObject consumes the '{' at the next non-space byte.
func (s *Scanner) EnterObject() error {
	if s.Peek() != '{' {
		return s.unexpected("'{'")
	}
	if err := s.enter(); err != nil {
		return err
	}
	s.starts = append(s.starts, len(s.names))
	s.sets = append(s.sets, nil)
	return nil
}

// EnterArray consumes the '[' at the next non-space byte.
func (s *Scanner) EnterArray() error {
	if s.Peek() != '[' {
		return s.unexpected("'['")
	}
	return s.enter()
}

func (s *Scanner) enter() error {
	if s.depth >= s.maxDepth {
		return &Error{Offset: s.pos, Msg: "nesting exceeds the maximum depth of " + strconv.Itoa(s.maxDepth), Depth: true}
	}
	s.pos++
	s.depth++
	return nil
}

// Member reads the next member name of the innermost open object and the ':' after it;
// i is the number of members read so far. It returns more false, having consumed the
// closing '}', when the object has no more members. The name is unescaped; it is valid
// until the next Reset.
func (s *Scanner) Member(i int) (name []byte, more bool, err error) {
	c := s.Peek()
	if c == '}' {
		s.pos++
		s.depth--
		k := len(s.starts) - 1
		s.names = s.names[:s.starts[k]]
		s.starts = s.starts[:k]
		s.sets[k] = nil
		s.sets = s.sets[:k]
		return nil, false, nil
	}
	if i > 0 {
		if c != ',' {
			return nil, false, s.unexpected("',' or '}' after an object member")
		}
		s.pos++
		c = s.Peek()
	}
	if c != '"' {
		return nil, false, s.unexpected("a string for an object member name")
	}
	at := s.pos
	s.nameAt = at
	raw, escaped, err := s.str()
	if err != nil {
		return nil, false, err
	}
	ref := nameRef{off: at + 1, n: len(raw) - 2}
	if escaped {
		start := len(s.scratch)
		s.scratch = AppendUnescaped(s.scratch, raw[1:len(raw)-1])
		ref = nameRef{off: start, n: len(s.scratch) - start, escaped: true}
	}
	name = s.name(ref)
	if err := s.addName(ref, name, at); err != nil {
		return nil, false, err
	}
	if s.Peek() != ':' {
		return nil, false, s.unexpected("':' after an object member name")
	}
	s.pos++
	return name, true, nil
}

// UncheckedMember reads, as Member does, the next member name of the innermost open object
// and the ':' after it, for a reader that refuses repeated names itself (wire's readers
// of a fixed form take each name of a struct at most once, in the order of its fields):
// the name is not recorded, so neither Member's duplicate check nor NumNames sees it. It
// takes only a plain name (printable ASCII, no escape) right after the ',' before it (i
// > 0) or the object's '{' (i = 0), its ':' right after it; it returns ok false, having
// consumed nothing, when the input does not continue so. The closing '}' is Member's.
func (s *Scanner) UncheckedMember(i int) (name []byte, ok bool) {
	data, p := s.data, s.pos
	if i > 0 {
		if p >= len(data) || data[p] != ',' {
			return nil, false
		}
		p++
	}
	if p >= len(data) || data[p] != '"' {
		return nil, false
	}
	e := skipPlain(data, p+1)
	if e+1 >= len(data) || data[e] != '"' || data[e+1] != ':' {
		return nil, false
	}
	s.nameAt, s.pos = p, e+2
	return data[p+1 : e], true
}

// addName records name (at ref) in the innermost open object, refusing a duplicate.
func (s *Scanner) addName(ref nameRef, name []byte, at int) error {
	k := len(s.starts) - 1
	prev := s.names[s.starts[k]:]
	if set := s.sets[k]; set != nil {
		if _, dup := set[string(name)]; dup {
			return s.duplicate(name, at)
		}
		set[string(name)] = struct{}{}
	} else {
		for _, p := range prev {
			if p.n == ref.n && string(s.name(p)) == string(name) {
				return s.duplicate(name, at)
			}
		}
		if len(prev)+1 >= setThreshold {
			set = make(map[string]struct{}, 2*setThreshold)
			for _, p := range prev {
				set[string(s.name(p))] = struct{}{}
			}
			set[string(name)] = struct{}{}
			s.sets[k] = set
		}
	}
	s.names = append(s.names, ref)
	return nil
}

func (s *Scanner) duplicate(name []byte, at int) error {
	return s.fail(at, "duplicate object member name "+strconv.Quote(string(name)))
}

// NameOffset returns the offset of the opening quote of the last name Member read.
func (s *Scanner) NameOffset() int { return s.nameAt }

// NumNames returns how many names have been read so far in the innermost open object,
// the last one included; Name(i) returns the i-th. The bytes are valid until the next
// Reset.
func (s *Scanner) NumNames() int { return len(s.names) - s.starts[len(s.starts)-1] }

// Name returns the i-th name read in the innermost open object (see NumNames).
func (s *Scanner) Name(i int) []byte { return s.name(s.names[s.starts[len(s.starts)-1]+i]) }

// Element prepares for the next element of the innermost open array, consuming the ','
// before it; i is the number of elements read so far. It returns more false, having
// consumed the closing ']', when the array has no more elements.
func (s *Scanner) Element(i int) (more bool, err error) {
	c := s.Peek()
	if c == ']' {
		s.pos++
		s.depth--
		return false, nil
	}
	if i > 0 {
		if c != ',' {
			return false, s.unexpected("',' or ']' after an array element")
		}
		s.pos++
	}
	return true, nil
}

// String reads the string at the next non-space byte and returns it raw, quotes included;
// escaped reports whether it holds escape sequences (AppendUnescaped decodes them).
func (s *Scanner) String() (raw []byte, escaped bool, err error) {
	if s.Peek() != '"' {
		return nil, false, s.unexpected("a string")
	}
	return s.str()
}

// str reads the string whose opening quote is at s.pos.
func (s *Scanner) str() (raw []byte, escaped bool, err error) {
	data := s.data
	start := s.pos
	i := start + 1
	for {
		i = skipPlain(data, i)
		if i >= len(data) {
			return nil, false, s.fail(len(data), "unexpected EOF inside a string")
		}
		switch c := data[i]; {
		case c == '"':
			s.pos = i + 1
			return data[start : i+1], escaped, nil
		case c == '\\':
			escaped = true
			n, err := s.escape(i)
			if err != nil {
				return nil, false, err
			}
			i += n
		case c < 0x20:
			return nil, false, s.fail(i, "invalid control character "+quoteByte(c)+" in a string")
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return nil, false, s.fail(i, "invalid UTF-8 in a string")
			}
			i += size
		}
	}
}

// SkipPlain returns the index of the first byte at or after i in data that a JSON string
// does not hold as it is (a byte below 0x20, a quote, a backslash, a byte with the high
// bit set), or len(data): readers of a fixed form (wire's canonical envelopes) find the
// end of a string that needs no unescaping with it, eight bytes at a time.
func SkipPlain(data []byte, i int) int { return skipPlain(data, i) }

// skipPlain returns the index of the first byte at or after i that is not plain, or
// len(data). Eight bytes at a time while they are all plain: a byte below 0x20, a quote, a
// backslash or a byte with the high bit set shows up as a set high bit in the mask. For a
// byte x below 0x80, x-0x20, (x^'"')-1 and (x^'\\')-1 have their high bit set exactly
// when x is below 0x20, a quote or a backslash (they stay above -0x81); a byte from 0x80
// up sets its own high bit (the "| v") and borrows from none of the subtractions. A
// subtraction borrows from the next byte only where it went below zero, at a flagged
// byte, so the bytes before the first flagged one are exact.
func skipPlain(data []byte, i int) int {
	const (
		ones = 0x0101010101010101
		high = 0x8080808080808080
	)
	for ; i >= 0 && i+8 <= len(data); i += 8 {
		v := binary.LittleEndian.Uint64(data[i : i+8])
		m := ((v - ones*0x20) | ((v ^ ones*'"') - ones) | ((v ^ ones*'\\') - ones) | v) & high
		if m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(data) && plain[data[i]] {
		i++
	}
	return i
}

// plain marks the bytes a string holds as they are: printable ASCII but '"' and '\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// escape checks the escape sequence at data[i] (a backslash) and returns its length.
func (s *Scanner) escape(i int) (int, error) {
	data := s.data
	if i+1 >= len(data) {
		return 0, s.fail(len(data), "unexpected EOF inside a string")
	}
	switch data[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, nil
	case 'u':
	default:
		return 0, s.fail(i, "invalid escape sequence "+strconv.Quote(string(data[i:i+2]))+" in a string")
	}
	r, ok := hex4(data, i+2)
	if !ok {
		return 0, s.fail(i, "invalid \\u escape in a string")
	}
	switch {
	case r >= 0xdc00 && r <= 0xdfff:
		return 0, s.fail(i, "unpaired surrogate escape in a string")
	case r >= 0xd800 && r <= 0xdbff:
		if i+11 < len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
			if lo, ok := hex4(data, i+8); ok && lo >= 0xdc00 && lo <= 0xdfff {
				return 12, nil
			}
		}
		return 0, s.fail(i, "unpaired surrogate escape in a string")
	}
	return 6, nil
}

// hex4 decodes the four hex digits at data[i:].
func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// AppendUnescaped appends the contents of a valid JSON string (without its quotes), its
// escape sequences decoded.
func AppendUnescaped(dst, s []byte) []byte {
	for {
		j := bytes.IndexByte(s, '\\')
		if j < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:j]...)
		s = s[j:]
		switch s[1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, _ := hex4(s, 2)
			if r >= 0xd800 && r <= 0xdbff && len(s) >= 12 {
				lo, _ := hex4(s, 8)
				r = (r-0xd800)<<10 | (lo - 0xdc00) + 0x10000
				s = s[6:]
			}
			dst = utf8.AppendRune(dst, r)
			s = s[6:]
			continue
		default: // '"', '\\', '/'
			dst = append(dst, s[1])
		}
		s = s[2:]
	}
}

func (s *Scanner) literal(lit string) error {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(lit)) {
		for i := 0; i < len(lit); i++ { // report the first byte that differs
			if s.pos+i >= len(s.data) || s.data[s.pos+i] != lit[i] {
				s.pos += i
				return s.unexpected("the literal " + lit)
			}
		}
	}
	s.pos += len(lit)
	return nil
}

// number reads a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *Scanner) number() error {
	data := s.data
	i := s.pos
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		i = digits(data, i+1)
	default:
		s.pos = i
		return s.unexpected("a digit in a number")
	}
	if i < len(data) && data[i] == '.' {
		j := digits(data, i+1)
		if j == i+1 {
			s.pos = j
			return s.unexpected("a digit after the decimal point")
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digits(data, i)
		if j == i {
			s.pos = j
			return s.unexpected("a digit in an exponent")
		}
		i = j
	}
	s.pos = i
	return nil
}

func digits(data []byte, i int) int {
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	return i
}
