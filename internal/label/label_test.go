package label

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"checkout bug", "checkout bug", true},
		{"  spaced  ", "spaced", true},
		{"", "", true},
		{"café ünïcode", "café ünïcode", true},
		{strings.Repeat("a", MaxBytes), strings.Repeat("a", MaxBytes), true},
		{strings.Repeat("a", MaxBytes+1), "", false},
		{"two\nlines", "", false},
		{"esc\x1b[31m", "", false},
		{"bidi\u202eevil", "", false},
		{"zero\u200bwidth", "", false},
		{"line\u2028sep", "", false},
		{"tag\U000E0041", "", false},
		{"bad\xffutf8", "", false},
	} {
		got, err := Check(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("Check(%q) = %q, %v; want %q, ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}
