package docs

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// testRef is a test a compatibility row names: `package.TestName`, the package as its
// directory below the repository's root.
var testRef = regexp.MustCompile("`([a-z0-9_/]+)\\.((?:Test|Fuzz)[A-Za-z0-9_]+)`")

// TestCompatibilityRowsNameTests: every row of every table in compatibility.md (but a
// header or separator) names at least one test in its last column, and every test named
// anywhere on the page exists: a func of that name in a _test.go file of that package's
// directory. A row whose behaviour changes loses its test, or the test its name, and this
// fails until the row is brought up to date.
func TestCompatibilityRowsNameTests(t *testing.T) {
	t.Parallel()
	const page = "protocol/compatibility.md"
	f, err := os.Open(page)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	rows, refs := 0, 0
	header := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		for _, m := range testRef.FindAllStringSubmatch(line, -1) {
			refs++
			if !testExists(t, m[1], m[2]) {
				t.Errorf("%s:%d names %s.%s, which does not exist", page, n, m[1], m[2])
			}
		}
		if !strings.HasPrefix(line, "|") {
			header = false
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		switch {
		case !header: // the first line of a table is its header
			header = true
			if last := strings.TrimSpace(cells[len(cells)-1]); last != "test" {
				t.Errorf("%s:%d: a table whose last column is %q, not test", page, n, last)
			}
			continue
		case strings.Trim(line, "|-: ") == "":
			continue
		}
		rows++
		if !testRef.MatchString(cells[len(cells)-1]) {
			t.Errorf("%s:%d: the row names no test in its last column: %s", page, n, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if rows < 50 || refs < rows {
		t.Errorf("%d rows and %d test names read: the page's form changed, or this test reads it wrong", rows, refs)
	}
}

// funcs caches the test functions of each package directory.
var funcs = map[string]map[string]bool{}

// testExists reports whether the package directory pkg (below the repository's root) has
// a test function name.
func testExists(t *testing.T, pkg, name string) bool {
	t.Helper()
	if funcs[pkg] == nil {
		funcs[pkg] = map[string]bool{}
		files, err := filepath.Glob(filepath.Join("..", filepath.FromSlash(pkg), "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)[A-Za-z0-9_]+)\(`)
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range decl.FindAllSubmatch(b, -1) {
				funcs[pkg][string(m[1])] = true
			}
		}
	}
	return funcs[pkg][name]
}
