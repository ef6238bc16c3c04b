package flow

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fixture is a file under testdata/invalid with the mistake it must be refused for: its
// first line says "# error: LINE:COLUMN: text" (or "// error: …" in JSON), its second,
// optionally, what the JSON Schema says of it ("# schema: accepts" for mistakes only the
// loader can see, "unreadable" for files that are not a JSON value at all).
type fixture struct {
	path      string
	line, col int
	text      string
	schema    string
}

var fixtureHeader = regexp.MustCompile(`^(?:#|//) error: (\d+)(?::(\d+))?: (.*)$`)

func invalidFixtures(t *testing.T) []fixture {
	t.Helper()
	paths, err := filepath.Glob("testdata/invalid/*")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	var out []fixture
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Scan()
		m := fixtureHeader.FindStringSubmatch(sc.Text())
		if m == nil {
			t.Fatalf("%s: the first line says no error", p)
		}
		f := fixture{path: p, text: m[3], schema: "refuses"}
		f.line, _ = strconv.Atoi(m[1])
		if m[2] != "" {
			f.col, _ = strconv.Atoi(m[2])
		}
		sc.Scan()
		if _, s, ok := strings.Cut(sc.Text(), "schema: "); ok {
			f.schema = s
		}
		out = append(out, f)
	}
	return out
}

// TestInvalidFlows holds every kind of mistake to its message and position.
func TestInvalidFlows(t *testing.T) {
	t.Parallel()
	for _, fx := range invalidFixtures(t) {
		t.Run(filepath.Base(fx.path), func(t *testing.T) {
			t.Parallel()
			f, err := Load(fx.path)
			if err == nil {
				err = f.Check(nil, func(string) (string, bool) { return "", false })
			}
			if err == nil {
				t.Fatal("accepted")
			}
			errs := Errors(err)
			if len(errs) == 0 {
				t.Fatalf("not an ErrorList: %v", err)
			}
			for _, e := range errs {
				if e.Pos.Line == fx.line && (fx.col == 0 || e.Pos.Col == fx.col) && strings.Contains(e.Msg, fx.text) {
					if !strings.Contains(e.Error(), filepath.Base(e.Pos.File)+":"+strconv.Itoa(fx.line)) {
						t.Errorf("the message does not name the file and line: %s", e)
					}
					return
				}
			}
			t.Errorf("want %d:%d: %s\ngot:\n%v", fx.line, fx.col, fx.text, err)
		})
	}
}

func TestValidFlows(t *testing.T) {
	t.Parallel()
	paths, _ := filepath.Glob("testdata/valid/*.*")
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			t.Parallel()
			f, err := Load(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Check(nil, nil); err != nil {
				t.Fatal(err)
			}
			if len(f.Steps) == 0 {
				t.Fatal("no steps")
			}
		})
	}
}

// TestAllKinds reads the fixture that has every step kind and operator, and checks what
// each became.
func TestAllKinds(t *testing.T) {
	t.Parallel()
	f, err := Load("testdata/valid/all-kinds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[StepKind]bool{}
	ops := map[string]bool{}
	for _, s := range f.Steps {
		seen[s.Kind] = true
		for _, e := range s.expects {
			ops[e.op] = true
		}
	}
	for _, k := range stepKinds {
		if !seen[k] {
			t.Errorf("no %s step", k)
		}
	}
	for _, op := range []string{"equals", "contains", "matches", "exists", "length", "range", "schema"} {
		if !ops[op] {
			t.Errorf("no %s expectation", op)
		}
	}
	if f.Timeout.String() != "2m0s" || f.TeardownTimeout.String() != "20s" || f.Vars["title"] != "Groceries" {
		t.Errorf("flow fields: %v %v %v", f.Timeout, f.TeardownTimeout, f.Vars)
	}
	if s := f.Steps[2]; s.Attempts != 3 || s.RetryDelay.String() != "100ms" {
		t.Errorf("retry: %d %v", s.Attempts, s.RetryDelay)
	}
	if s := f.Steps[13]; s.Included == nil || s.Included.Name != "sign in" {
		t.Errorf("include: %+v", s)
	}
	if got := f.Count(); got != len(f.Setup)+len(f.Steps)-1+1+len(f.Teardown) {
		t.Errorf("Count = %d", got)
	}
}

// TestHugeFileRefusedEarly: a 100 MB file is refused from its size, before it is read.
func TestHugeFileRefusedEarly(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "huge.yaml")
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: the file claims 100 MB without the disk holding them.
	if err := fh.Truncate(100 << 20); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	_, err = Load(path)
	if err == nil || !strings.Contains(err.Error(), "104857600 bytes; a flow is at most 1048576") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Parse("big.yaml", make([]byte, MaxFileSize+1)); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Fatalf("Parse: %v", err)
	}
}

func TestBounds(t *testing.T) {
	t.Parallel()
	deep := "schema: ansight.flow/v1\nsteps:\n  - call: x\n    arguments: {a: " + strings.Repeat("[", 70) + strings.Repeat("]", 70) + "}\n"
	if _, err := Parse("deep.yaml", []byte(deep)); err == nil || !strings.Contains(err.Error(), "nested more than 64 deep") {
		t.Errorf("deep YAML: %v", err)
	}
	deepJSON := `{"schema":"ansight.flow/v1","steps":[{"call":"x","arguments":{"a":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}}]}`
	if _, err := Parse("deep.json", []byte(deepJSON)); err == nil || !strings.Contains(err.Error(), "nested more than 64 deep") {
		t.Errorf("deep JSON: %v", err)
	}
	many := `{"schema":"ansight.flow/v1","steps":[{"call":"x","arguments":{"a":[` + strings.Repeat("0,", MaxValues) + `0]}}]}`
	if _, err := Parse("many.json", []byte(many)); err == nil || !strings.Contains(err.Error(), "more than 100000 values") {
		t.Errorf("many values: %v", err)
	}
	if _, err := Parse("bad.yaml", []byte("schema: \xff\n")); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Errorf("invalid UTF-8: %v", err)
	}
	two := "schema: ansight.flow/v1\nsteps: [{call: x}]\n---\nschema: ansight.flow/v1\n"
	if _, err := Parse("two.yaml", []byte(two)); err == nil || !strings.Contains(err.Error(), "more than one YAML document") {
		t.Errorf("two documents: %v", err)
	}
}

// TestSuggestions: a key in the wrong case or with a typo names the one meant.
func TestSuggestions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ key, want string }{
		{"Name", "name"}, {"expects", "expect"}, {"expect_error", "expectError"}, {"zzzzzz", ""},
	} {
		t.Run(tc.key, func(t *testing.T) {
			t.Parallel()
			src := "schema: ansight.flow/v1\nsteps:\n  - call: x\n    " + tc.key + ": 1\n"
			_, err := Parse("s.yaml", []byte(src))
			if err == nil {
				t.Fatal("accepted")
			}
			hint := `did you mean "` + tc.want + `"`
			if got := strings.Contains(err.Error(), hint); got != (tc.want != "") {
				t.Errorf("%v", err)
			}
		})
	}
}

func TestOfficialTestDefinitions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ path, id string }{
		{"testdata/official/ansight/tests/annotation.live-roundtrip.yaml", "annotation.live-roundtrip"},
		{"testdata/official/ansight/tests/smoke.json", "smoke"},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			t.Parallel()
			entries, err := Discover([]string{tc.path})
			if err != nil {
				t.Fatal(err)
			}
			e := entries[0]
			oe, ok := e.Err.(*OfficialTestError)
			if e.Kind != FileOfficialTest || !ok || oe.ID != tc.id {
				t.Fatalf("entry %+v", e)
			}
			if !strings.Contains(oe.Error(), "official workspace test (test-definition.v1") {
				t.Errorf("message: %v", oe)
			}
		})
	}
	ws, id, ok := OfficialRunForm([]string{"testdata/official", "annotation.live-roundtrip"})
	if !ok || ws != "testdata/official" || id != "annotation.live-roundtrip" {
		t.Errorf("OfficialRunForm = %q %q %v", ws, id, ok)
	}
	if _, _, ok := OfficialRunForm([]string{"testdata/valid", "testdata/valid/notes.yaml"}); ok {
		t.Error("two flow paths read as the official form")
	}
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	entries, err := Discover([]string{"testdata"})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[FileKind]int{}
	for _, e := range entries {
		kinds[e.Kind]++
		if strings.Contains(e.Path, "/valid/") && e.Err != nil {
			t.Errorf("%s: %v", e.Path, e.Err)
		}
	}
	// Every fixture that says schema: ansight.flow/v1 is a flow; the two official tests
	// are reported as such; nothing else under testdata is listed.
	if kinds[FileOfficialTest] != 2 {
		t.Errorf("official tests: %d", kinds[FileOfficialTest])
	}
	for _, e := range entries {
		if strings.Contains(e.Path, "missing-schema") || strings.Contains(e.Path, "not-object") {
			t.Errorf("%s is not a flow but was listed", e.Path)
		}
	}
}
