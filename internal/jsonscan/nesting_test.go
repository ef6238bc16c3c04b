package jsonscan

import "testing"

func TestNesting(t *testing.T) {
	for in, want := range map[string]int{
		`1`: 0, `"[{"`: 0, `[]`: 1, `{"a":[1,{"b":[]}]}`: 4, `["\"[", [[]]]`: 3, `[[],[]]`: 2, `{"a":"\\"}`: 1,
	} {
		if got := Nesting([]byte(in)); got != want {
			t.Errorf("Nesting(%s) = %d, want %d", in, got, want)
		}
	}
}

// TestStringWalk holds StringWalk against a hand-made marking of which bytes are a
// string's (s), and which of those are its own characters (c), escapes and quotes apart.
func TestStringWalk(t *testing.T) {
	for _, tc := range []struct{ in, str, chars string }{
		{`{"a":1}`, ` sss   `, `  c    `},
		{`["\"x",2]`, ` sssss   `, `    c    `},
		{`"\u0041<"`, `sssssssss`, `       c `},
		{`"\\"[`, `ssss `, `     `},
		{`1 "é"`, `  ssss`, `   cc `},
	} {
		var w StringWalk
		var str, chars []byte
		for i := range len(tc.in) {
			chars = append(chars, " c"[b2i(w.Character() && tc.in[i] != '"' && tc.in[i] != '\\')])
			str = append(str, " s"[b2i(w.Step(tc.in[i]))])
		}
		if string(str) != tc.str || string(chars) != tc.chars {
			t.Errorf("%s: strings %q characters %q, want %q %q", tc.in, str, chars, tc.str, tc.chars)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
