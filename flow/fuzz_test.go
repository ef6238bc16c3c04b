package flow

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse holds the flow reader (YAML and JSON) to its contract on any input: no panic,
// every mistake an *Error with the file named and a line within the input, and an accepted
// flow that checks and lists without panicking.
func FuzzParse(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*/*.*")
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil && len(data) < 4096 {
			f.Add(strings.HasSuffix(p, ".json"), data)
		}
	}
	f.Fuzz(func(t *testing.T, asJSON bool, data []byte) {
		name := "fuzz.yaml"
		if asJSON {
			name = "fuzz.json"
		}
		fl, err := Parse(name, data)
		if err != nil {
			// YAML breaks lines at \r too, and at NEL, LS and PS.
			text := strings.ReplaceAll(string(data), "\r\n", "\n")
			lines := 1 + strings.Count(text, "\n") + strings.Count(text, "\r") +
				strings.Count(text, "\u0085") + strings.Count(text, "\u2028") + strings.Count(text, "\u2029")
			for _, e := range Errors(err) {
				if e.Pos.File == "" {
					t.Fatalf("an error without its file: %v", e)
				}
				if e.Pos.Line > lines+1 {
					t.Fatalf("line %d of a %d-line input: %v", e.Pos.Line, lines, e)
				}
			}
			if len(Errors(err)) == 0 {
				if _, ok := err.(*OfficialTestError); !ok {
					t.Fatalf("not an ErrorList: %T %v", err, err)
				}
			}
			return
		}
		_ = fl.Check(map[string]string{}, func(string) (string, bool) { return "", false })
		for _, s := range fl.Steps {
			_ = s.Label()
		}
		_ = fl.Count()
	})
}
