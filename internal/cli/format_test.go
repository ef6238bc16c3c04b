package cli

import (
	"bytes"
	"regexp"
	"testing"
)

// TestTableColours: colours only on a terminal, and a coloured table lines up exactly as
// the plain one once the escapes are removed.
func TestTableColours(t *testing.T) {
	render := func(colour bool) string {
		var b bytes.Buffer
		tw := newTable(&b)
		if tw.colour {
			t.Fatal("colours on for a buffer")
		}
		tw.colour = colour
		tw.row("TOOL", tw.paint(colourDefault, "POLICY"), tw.paint(colourDefault, "STATE"), "DESCRIPTION")
		for _, r := range [][3]string{{"a.read", "read", "ok"}, {"bb.write", "write", "blocked:tool_policy_not_granted"}, {"c", "critical", "unavailable:x"}} {
			tw.row(r[0], tw.paint(policyColour(r[1]), r[1]), tw.paint(stateColour(r[2]), r[2]), "text")
		}
		tw.flush()
		return b.String()
	}
	plain, coloured := render(false), render(true)
	if plain == coloured {
		t.Fatal("no colours when asked for them")
	}
	stripped := regexp.MustCompile("\x1b\\[[0-9]+m").ReplaceAllString(coloured, "")
	if stripped != plain {
		t.Errorf("coloured table misaligned:\n%s\nwant\n%s", stripped, plain)
	}
}
