package jsonscan

// StringWalk follows JSON text one byte at a time just far enough to tell the bytes of its
// strings from the structure around them, without validating or decoding: for the quick
// checks over text that a strict reader validates before or after (nesting depth,
// whitespace, escaping in place). The zero value starts outside any string.
type StringWalk struct {
	in, escaped bool
	hexLeft     int8 // hex digits of a \u escape still to come
}

// Step takes the next byte and reports whether it belongs to a string, its quotes included.
func (w *StringWalk) Step(c byte) bool {
	if !w.in {
		w.in = c == '"'
		return w.in
	}
	switch {
	case w.hexLeft > 0:
		w.hexLeft--
	case w.escaped:
		w.escaped = false
		if c == 'u' {
			w.hexLeft = 4
		}
	case c == '\\':
		w.escaped = true
	case c == '"':
		w.in = false
	}
	return true
}

// Character reports whether the next byte, if it is not a quote or a backslash, is one of
// a string's own characters: inside a string and not within an escape sequence.
func (w *StringWalk) Character() bool { return w.in && !w.escaped && w.hexLeft == 0 }
