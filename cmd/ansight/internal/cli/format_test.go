package cli

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
)

// TestTableColours: colours only on a terminal, and a coloured table lines up exactly as
// the plain one once the escapes are removed.
func TestTableColours(t *testing.T) {
	t.Parallel()
	render := func(colour bool) string {
		var b bytes.Buffer
		tw := newTable(&b).colourBy(1, policyColour).colourBy(2, stateColour)
		if tw.colour {
			t.Fatal("colours on for a buffer")
		}
		tw.colour = colour
		tw.header("TOOL", "POLICY", "STATE", "DESCRIPTION")
		for _, r := range [][3]string{{"a.read", "read", "ok"}, {"bb.write", "write", "blocked:tool_policy_not_granted"}, {"c", "critical", "unavailable:x"}} {
			tw.row(r[0], r[1], r[2], "text")
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

func TestTermText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain text, ünïcode ✓ and a \\ backslash": "plain text, ünïcode ✓ and a \\ backslash",
		"clipboard\x1b]52;c;ZXZpbA==\x07":          `clipboard\x1b]52;c;ZXZpbA==\a`,
		"clear\x1b[2J\x1b[H":                       `clear\x1b[2J\x1b[H`,
		"two\nlines\r\tand tab":                    `two\nlines\r\tand tab`,
		"c1 csi \u009b31m":                         `c1 csi \u009b31m`,
		"del \x7f":                                 `del \x7f`,
		"bidi \u202egnp.exe":                       `bidi \u202egnp.exe`,
		"isolate \u2066x\u2069":                    `isolate \u2066x\u2069`,
		"sep \u2028":                               `sep \u2028`,
		"bad \xff\xfe utf8":                        `bad \xff\xfe utf8`,
	} {
		if got := termText(in); got != want {
			t.Errorf("termText(%q) = %q, want %q", in, got, want)
		}
	}
	if got := string(termLines("{\n  \"a\": \"x\u009b\"\n}")); got != "{\n  \"a\": \"x\\u009b\"\n}" {
		t.Errorf("termLines kept or lost the wrong characters: %q", got)
	}
}

// TestPrintfSanitises: every string-like argument is sanitised, safe text is not, and the
// format's own newlines stay.
func TestPrintfSanitises(t *testing.T) {
	t.Parallel()
	type named string
	var b bytes.Buffer
	printf(&b, "%s|%s|%v|%s|%d\n", "a\x1bb", named("c\x07"), errors.New("e\x1b[2J"), safe("ok\n"), 7)
	if got, want := b.String(), "a\\x1bb|c\\a|e\\x1b[2J|ok\n|7\n"; got != want {
		t.Errorf("printf wrote %q, want %q", got, want)
	}
	var tb bytes.Buffer
	tw := newTable(&tb)
	tw.row("id\tforged column", "line\nforged row")
	tw.flush()
	if strings.Count(tb.String(), "\n") != 1 || strings.Contains(tb.String(), "\t") {
		t.Errorf("a cell broke the table: %q", tb.String())
	}
}
