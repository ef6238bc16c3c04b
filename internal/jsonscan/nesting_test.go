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
