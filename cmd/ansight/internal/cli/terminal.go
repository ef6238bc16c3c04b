package cli

import (
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Strings from an app (device and app names, tool ids, names and descriptions, results,
// error messages, file names) are untrusted input that the human-readable output writes to
// a terminal. A terminal obeys control sequences: an app could write the user's clipboard
// (OSC 52), clear the screen, move the cursor, retitle the window, or forge lines of our
// output. So every such string goes through termText before it is printed — by the table
// (every cell), by printf (every string and error argument) and by termLines (blocks of
// JSON) — and --json output, meant for programs, stays exact.

// termText returns s with every character a terminal could act on written as a Go escape:
// C0 controls (\t, \n and \r included: a string from an app is one cell or one line of
// ours), DEL, C1 controls, the Unicode formatting characters that reorder or break text
// (bidirectional overrides and isolates, line and paragraph separators), and bytes that
// are not UTF-8. Everything else, backslashes included, is kept.
func termText(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r, n) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s // the common case: nothing to escape, nothing allocated
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafeRune(r, n):
			q := strconv.QuoteRune(r) // '\x1b', '\n', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// unsafeRune reports whether a decoded rune must be escaped.
func unsafeRune(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1: // not UTF-8
		return true
	case r < 0x20, r >= 0x7f && r <= 0x9f: // C0, DEL, C1
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069: // bidi
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separators
		return true
	}
	return false
}

// termLines is termText for a block whose line breaks are ours (indented JSON): each line
// is sanitised on its own and the breaks kept.
func termLines(s string) safe {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = termText(l)
	}
	return safe(strings.Join(lines, "\n"))
}

// safe is text fit for a terminal as it is: our own, or already sanitised (termLines).
// printf writes it unchanged.
type safe string

// printf is fmt.Fprintf for the human-readable output: arguments that are strings (of
// any string type) or errors are sanitised with termText, and a safe argument is written
// as it is, so the format string is the only source of control characters. Use it
// wherever an argument may come from an app.
func printf(w io.Writer, format string, args ...any) {
	for i, a := range args {
		switch v := a.(type) {
		case safe:
			args[i] = string(v)
		case error:
			args[i] = termText(v.Error())
		default:
			if rv := reflect.ValueOf(a); rv.Kind() == reflect.String {
				args[i] = termText(rv.String())
			}
		}
	}
	fmt.Fprintf(w, format, args...)
}

// writeReport writes a multi-line report (a conformance run, a benchmark) that quotes what
// an app sent, sanitised line by line.
func writeReport(w io.Writer, write func(io.Writer) error) error {
	var text strings.Builder
	if err := write(&text); err != nil {
		return err
	}
	_, err := io.WriteString(w, string(termLines(text.String())))
	return err
}
