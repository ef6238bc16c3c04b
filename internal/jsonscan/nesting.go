package jsonscan

// Nesting is the deepest nesting of arrays and objects in the JSON text b (0 for a
// scalar), counted without decoding: brackets inside strings do not count. Invalid JSON
// gets a number all the same and is left to the decoder; it is for bounding nesting before
// a decoder that has no bound of its own (or a different one) reads b.
func Nesting(b []byte) int {
	var w StringWalk
	d, deepest := 0, 0
	for _, c := range b {
		switch {
		case w.Step(c):
		case c == '{' || c == '[':
			d++
			deepest = max(deepest, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return deepest
}
