package prefs

import "testing"

// FuzzValue: a value prefs.set_value accepts (any type, any text from a host) is written to
// a file store and read back as the same type and text.
func FuzzValue(f *testing.F) {
	for _, s := range [][2]string{{"string", "x"}, {"boolean", "TRUE"}, {"integer", "-42"}, {"number", "1e-7"},
		{"number", "2"}, {"string_array", `["a","\u00e9"]`}, {"string_array", "[]"}, {"number", "-0"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, typ, text string) {
		v, err := parseValue(Type(typ), text)
		if err != nil {
			return
		}
		raw, err := encode(v)
		if err != nil {
			t.Fatalf("%s %q parsed but cannot be written: %v", typ, text, err)
		}
		back := decode(raw)
		if back.Type != v.Type || back.Text() != v.Text() {
			t.Fatalf("%s %q: written %s, read back %s %q (want %q)", typ, text, raw, back.Type, back.Text(), v.Text())
		}
	})
}
