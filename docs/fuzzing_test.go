package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestFuzzTargetsListed: every fuzz target of the module (a func FuzzXxx in a _test.go file)
// is one row of fuzzing.md's table, under its package, and has a committed seed corpus in
// <package>/testdata/fuzz/FuzzXxx/; every row names a target that exists. A new target, a
// moved or renamed one, fails this until the page says so.
func TestFuzzTargetsListed(t *testing.T) {
	t.Parallel()
	decl := regexp.MustCompile(`(?m)^func (Fuzz[A-Za-z0-9_]+)\(`)
	var targets []string // "pkg FuzzXxx"
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != ".." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != ".." {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(strings.TrimPrefix(path, ".."+string(filepath.Separator))))
		for _, m := range decl.FindAllSubmatch(b, -1) {
			targets = append(targets, pkg+" "+string(m[1]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile("fuzzing.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9_/]+)` \\| `(Fuzz[A-Za-z0-9_]+)` \\|")
	var rows []string
	for _, m := range row.FindAllStringSubmatch(string(page), -1) {
		if r := m[1] + " " + m[2]; slices.Contains(rows, r) {
			t.Errorf("docs/fuzzing.md lists %s.%s twice", m[1], m[2])
		} else {
			rows = append(rows, r)
		}
	}
	if len(targets) < 40 || len(rows) < 40 {
		t.Fatalf("%d targets and %d rows read: the page's form changed, or this test reads it wrong", len(targets), len(rows))
	}
	for _, target := range targets {
		pkg, name, _ := strings.Cut(target, " ")
		if !slices.Contains(rows, target) {
			t.Errorf("%s.%s is not a row of docs/fuzzing.md (| `%s` | `%s` | what it feeds | what must hold |)", pkg, name, pkg, name)
		}
		if entries, err := os.ReadDir(filepath.Join("..", filepath.FromSlash(pkg), "testdata", "fuzz", name)); err != nil || len(entries) == 0 {
			t.Errorf("%s.%s has no committed seed corpus in %s/testdata/fuzz/%s/", pkg, name, pkg, name)
		}
	}
	for _, r := range rows {
		if !slices.Contains(targets, r) {
			t.Errorf("docs/fuzzing.md lists %s, which is not a fuzz target of that package", strings.Replace(r, " ", ".", 1))
		}
	}
}
