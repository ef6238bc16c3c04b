package jsonscan

// Nesting is the deepest nesting of arrays and objects in the JSON text b (0 for a
// scalar), counted without decoding: brackets inside strings do not count. Invalid JSON
// gets a number all the same and is left to the decoder; it is for bounding nesting before
// a decoder that has no bound of its own (or a different one) reads b.
func Nesting(b []byte) int {
	d, deepest, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			d++
			deepest = max(deepest, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return deepest
}
