package jsonscan

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is a refusal: what is wrong, where (byte offset) and in which value (a JSON
// Pointer, built as the error returns up through the containers that hold the value).
type Error struct {
	// Offset is the byte offset in the input at which the problem was found.
	Offset int
	// Msg says what is wrong, without the location.
	Msg string
	// Depth is set when the input nests deeper than the scanner's limit.
	Depth bool

	segs []string // path segments, innermost first
}

func (e *Error) Error() string {
	s := "jsonscan: " + e.Msg
	if p := e.Pointer(); p != "" {
		s += " at " + p
	}
	return s + " (offset " + strconv.Itoa(e.Offset) + ")"
}

// Pointer returns the RFC 6901 JSON Pointer of the value in which the error was found, ""
// for the top-level value.
func (e *Error) Pointer() string {
	if len(e.segs) == 0 {
		return ""
	}
	var b strings.Builder
	for i := len(e.segs) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(escapeToken(e.segs[i]))
	}
	return b.String()
}

// In records that the value the error was found in sits under the member name or array
// index seg of its container. Walkers built on the scanner call it as the error returns
// through them; the scanner does it itself within Value.
func (e *Error) In(seg string) *Error {
	e.segs = append(e.segs, seg)
	return e
}

// within adds seg to err when it is an *Error.
func within(err error, seg string) error {
	if e, ok := err.(*Error); ok {
		return e.In(seg)
	}
	return err
}

func escapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func (s *Scanner) fail(offset int, msg string) *Error {
	return &Error{Offset: offset, Msg: msg}
}

// unexpected reports the byte at s.pos (or the end of input) where what was expected.
func (s *Scanner) unexpected(what string) *Error {
	if s.pos >= len(s.data) {
		if s.depth == 0 && len(bytes.TrimLeft(s.data, " \t\r\n")) == 0 {
			return s.fail(s.pos, "empty input: no JSON value")
		}
		return s.fail(s.pos, "unexpected EOF, expected "+what)
	}
	return s.fail(s.pos, "invalid character "+quoteByte(s.data[s.pos])+", expected "+what)
}

func quoteByte(c byte) string {
	if c < 0x20 || c >= 0x7f {
		return "0x" + strconv.FormatUint(uint64(c), 16)
	}
	return strconv.QuoteRune(rune(c))
}

// Elide returns s, or when it is longer than n bytes its start and end around an
// ellipsis, cut on rune boundaries: for error messages that quote what a peer sent (member
// names in a pointer, say), which must not echo megabytes back.
func Elide(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := n/2, len(s)-n/2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + "…" + s[tail:]
}
