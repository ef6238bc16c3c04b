package editdist

import "testing"

func TestDistance(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "call", 4},
		{"call", "", 4},
		{"cal", "call", 1},
		{"lst", "list", 1},
		{"sesion", "session", 1},
		{"tiemout", "timeout", 2},
		{"kitten", "sitting", 3},
		{"café", "cafe", 1}, // one rune, not two bytes
		{"same", "same", 0},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (not symmetric)", c.b, c.a, got, c.want)
		}
	}
}
