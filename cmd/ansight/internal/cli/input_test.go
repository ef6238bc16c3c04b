package cli

import (
	"strings"
	"testing"
)

// TestParseJWCC: comments and trailing commas are taken and the result is compact standard
// JSON; duplicate names are refused; nesting deep enough to exhaust the JWCC parser's stack
// is refused before it is parsed.
func TestParseJWCC(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"a":1}`: `{"a":1}`,
		"{\n // note\n \"a\": [1, 2,], /* \"b\": 2 */\n}": `{"a":[1,2]}`,
		`{"s":"// not a comment, /* nor this */",}`:       `{"s":"// not a comment, /* nor this */"}`,
		`{"a":1,"a":2}`:                      "",
		`{"a":1,"a":2,}`:                     "",
		`{"a":}`:                             "",
		strings.Repeat("[", 2_000_000) + ",": "",
	} {
		got, err := parseJWCC([]byte(in))
		if want == "" && err == nil || want != "" && (err != nil || string(got) != want) {
			t.Errorf("parseJWCC(%.40q) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := parseJWCC([]byte(strings.Repeat("[", 2_000_000) + ",")); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("deep nesting: %v", err)
	}
	// Errors name the place in the input, not the parser's package.
	for in, want := range map[string]string{
		`{"a": 1, "b": }`: "line 1, column 15: invalid character '}' at start of value",
		`{"a":1,"a":2,}`:  `duplicate object member name "a"`,
	} {
		_, err := parseJWCC([]byte(in))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("parseJWCC(%q): %v; want %s…", in, err, want)
		}
	}
}
