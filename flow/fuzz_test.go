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

// FuzzRecord holds the recorder to its contract on any recorded traffic (a recording may
// be an imported archive from anywhere): no panic, and what it writes is a flow that
// reads and checks — every reference it writes reads a step before it. The input is one
// traffic record's data a line.
func FuzzRecord(f *testing.F) {
	var seed []byte
	for _, tr := range demoTraffic(f) {
		seed = append(append(seed, tr.Data...), '\n')
	}
	f.Add(seed)
	f.Add([]byte(`{"direction":"request","type":"tool.call","requestId":"1","payload":{"toolId":"a.b","arguments":{"id":"x1"}}}
{"direction":"response","type":"tool.result","requestId":"1","outcome":"ok","payload":{"toolId":"a.b","success":true,"result":{"id":"x1","ref":{"id":"x1"},"revision":3}}}
{"direction":"request","type":"ui.operation","requestId":"ui-1","outcome":"error","errorCode":"ui_assert_failed","payload":{"operation":"assert","selector":{"automationId":"row-x1"},"count":2}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var traffic []Traffic
		for line := range strings.SplitSeq(string(data), "\n") {
			if line != "" {
				traffic = append(traffic, Traffic{Data: []byte(line)})
			}
		}
		text, n, err := Record(traffic, RecordOptions{Name: "fuzz"})
		if err != nil || n == 0 { // no step: 'test record' says so, the file is a stub
			return
		}
		fl, err := Parse("recorded.yaml", text)
		if err != nil {
			t.Fatalf("the recorded flow does not read: %v\n%s", err, text)
		}
		if err := fl.Check(map[string]string{}, func(string) (string, bool) { return "", false }); err != nil {
			t.Fatalf("the recorded flow does not check: %v\n%s", err, text)
		}
	})
}
