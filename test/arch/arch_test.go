package arch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

const module = "github.com/ansight-go/ansight"

// root is the module's directory, from test/arch.
const root = "../.."

// pkg is what go list says of one package.
type pkg struct {
	ImportPath string
	Imports    []string
	Standard   bool
	DepOnly    bool
	Module     *struct{ Path string }
}

// graph is the module's packages (by path relative to the module: "wire", "host/tools")
// with their imports, and the module of every other package they import.
type graph struct {
	imports  map[string][]string // module package → its imports (full paths)
	moduleOf map[string]string   // non-standard import path → its module path
}

var (
	loadOnce sync.Once
	loaded   *graph
	loadErr  error
)

// load runs go list once for every test of the package.
func load(t *testing.T) *graph {
	t.Helper()
	loadOnce.Do(func() { loaded, loadErr = goList() })
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return loaded
}

func goList() (*graph, error) {
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports,Standard,DepOnly,Module", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, stderr.String())
	}
	g := &graph{imports: map[string][]string{}, moduleOf: map[string]string{}}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %v", err)
		}
		if p.Standard {
			continue
		}
		if p.Module != nil {
			g.moduleOf[p.ImportPath] = p.Module.Path
		}
		if !p.DepOnly && p.Module != nil && p.Module.Path == module {
			g.imports[rel(p.ImportPath)] = p.Imports
		}
	}
	if len(g.imports) == 0 {
		return nil, fmt.Errorf("go list ./... in %s found no package of %s", root, module)
	}
	return g, nil
}

func rel(path string) string { return strings.TrimPrefix(path, module+"/") }

// folder is a package's top-level folder: one node of the folder-level graph.
func folder(p string) string {
	top, _, _ := strings.Cut(p, "/")
	return top
}

// shortName is how the table names another module: its path without a leading github.com/
// or golang.org/ (go-json-experiment/json, x/image, modernc.org/sqlite).
func shortName(modulePath string) string {
	for _, prefix := range []string{"github.com/", "golang.org/"} {
		if s, ok := strings.CutPrefix(modulePath, prefix); ok {
			return s
		}
	}
	return modulePath
}

// row is one row of the package table.
type row struct {
	line     int      // in docs/architecture.md
	packages []string // module-relative paths
	imports  []string // as written, notes in parentheses removed
}

func (r row) String() string {
	return fmt.Sprintf("row %q (docs/architecture.md:%d)", strings.Join(r.packages, ", "), r.line)
}

// readTable reads the package table of docs/architecture.md.
func readTable(t *testing.T) []row {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "docs/architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []row
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	in := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !in {
			in = strings.HasPrefix(line, "| package | owns | imports |")
			continue
		}
		if strings.HasPrefix(line, "|---") {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|"), " | ")
		if len(cells) != 3 {
			t.Fatalf("docs/architecture.md:%d: a row of the package table has %d cells, want 3 (package, owns, imports; a | inside a cell splits it)", n, len(cells))
		}
		r := row{line: n}
		for _, name := range strings.Split(cells[0], ",") {
			name = strings.Trim(strings.TrimSpace(name), "`")
			if name == "" {
				t.Fatalf("docs/architecture.md:%d: empty package name in %q", n, cells[0])
			}
			r.packages = append(r.packages, name)
		}
		for _, item := range splitTop(cells[2]) {
			if i := strings.Index(item, "("); i >= 0 {
				item = item[:i]
			}
			item = strings.Trim(strings.TrimSpace(item), "`")
			if item != "" && item != "—" {
				r.imports = append(r.imports, item)
			}
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("docs/architecture.md has no package table (a line starting \"| package | owns | imports |\")")
	}
	return rows
}

// splitTop splits a cell at the commas outside parentheses.
func splitTop(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// rowOf maps each package named in the table to the index of its row.
func rowOf(t *testing.T, rows []row) map[string]int {
	t.Helper()
	at := map[string]int{}
	for i, r := range rows {
		for _, p := range r.packages {
			if j, dup := at[p]; dup {
				t.Errorf("%s names %s, already in %s", r, p, rows[j])
			}
			at[p] = i
		}
	}
	return at
}

// Every package of the module has exactly one row, and every row names packages that exist.
func TestTableCoversEveryPackage(t *testing.T) {
	t.Parallel()
	g, rows := load(t), readTable(t)
	at := rowOf(t, rows)
	for p := range g.imports {
		if _, ok := at[p]; !ok {
			t.Errorf("package %s has no row in docs/architecture.md's package table", p)
		}
	}
	for _, r := range rows {
		for _, p := range r.packages {
			if _, ok := g.imports[p]; !ok {
				t.Errorf("%s names %s, which is not a package of the module (moved or gone?)", r, p)
			}
		}
	}
}

// Each row's imports are exactly what its packages import: the module's packages by path,
// other modules by short name. Imports between the packages of one row are not listed.
func TestTableImports(t *testing.T) {
	t.Parallel()
	g, rows := load(t), readTable(t)
	for _, r := range rows {
		want := map[string]string{} // listed name → what imports it (for the message)
		for _, p := range r.packages {
			for _, imp := range g.imports[p] {
				var name string
				switch m, ok := g.moduleOf[imp]; {
				case !ok:
					continue // the standard library
				case m == module:
					name = rel(imp)
					if slices.Contains(r.packages, name) {
						continue
					}
				default:
					name = shortName(m)
				}
				if _, seen := want[name]; !seen {
					want[name] = p + " imports " + imp
				}
			}
		}
		listed := map[string]bool{}
		for _, name := range r.imports {
			if listed[name] {
				t.Errorf("%s lists %s twice", r, name)
			}
			listed[name] = true
			if _, ok := want[name]; !ok {
				t.Errorf("%s lists import %s, which none of its packages imports (stale, or not named as the rule says: a package of the module by its path, another module by its path without github.com/ or golang.org/)", r, name)
			}
		}
		var missing []string
		for name := range want {
			if !listed[name] {
				missing = append(missing, name)
			}
		}
		sort.Strings(missing)
		for _, name := range missing {
			t.Errorf("%s misses import %s (%s)", r, name, want[name])
		}
	}
}

// The table is the layer order. A package imports only packages of rows above its own (or
// of its own row), and the rows of one top-level folder are together, so the folders are
// layered in the table's order and no folder-level import runs upward.
func TestLayersPointDown(t *testing.T) {
	t.Parallel()
	g, rows := load(t), readTable(t)
	at := rowOf(t, rows)

	// The rows of a folder are contiguous: the folder's rank is its place in the table.
	rank := map[string]int{}
	last := ""
	for _, r := range rows {
		for _, p := range r.packages {
			f := folder(p)
			if f == last {
				continue
			}
			if _, seen := rank[f]; seen {
				t.Errorf("%s is in folder %s/, whose rows are not together: keep a folder's rows in one run so that the folder has one rank", r, f)
				continue
			}
			rank[f] = len(rank)
			last = f
		}
	}

	arrows, up := map[[2]string]bool{}, 0
	for p, imps := range g.imports {
		i, ok := at[p]
		if !ok {
			continue // TestTableCoversEveryPackage reports it
		}
		for _, imp := range imps {
			if g.moduleOf[imp] != module {
				continue
			}
			q := rel(imp)
			j, ok := at[q]
			if !ok {
				continue
			}
			if j > i {
				t.Errorf("%s imports %s, whose %s is below it: a package imports only rows above its own", p, q, rows[j])
			}
			if fp, fq := folder(p), folder(q); fp != fq {
				arrows[[2]string{fp, fq}] = true
				if rank[fq] > rank[fp] {
					up++
					t.Errorf("folder-level import runs upward: %s/ (%s) imports %s/ (%s)", fp, p, fq, q)
				}
			}
		}
	}
	t.Logf("%d folder-level arrows between %d folders, %d upward", len(arrows), len(rank), up)
}

// internal/ holds leaves only: its packages import no package of the module outside it.
// (Nested internal/ folders, app/internal and cmd/ansight/internal, are how their parent
// keeps code private — cmd/ansight/internal is the program — and are not leaves.)
func TestInternalHoldsLeaves(t *testing.T) {
	t.Parallel()
	g := load(t)
	n := 0
	for p, imps := range g.imports {
		if !strings.HasPrefix(p, "internal/") {
			continue
		}
		n++
		for _, imp := range imps {
			if g.moduleOf[imp] == module && !strings.HasPrefix(rel(imp), "internal/") {
				t.Errorf("%s imports %s: a package under internal/ is a leaf and imports no package of the module outside internal/", p, rel(imp))
			}
		}
	}
	if n == 0 {
		t.Fatal("no package under internal/: the check looks at the wrong packages")
	}
}

// maxCLIFunc bounds the CLI's functions: a command is an options struct, a constructor that
// binds its flags and a run function, each readable in one screen.
const maxCLIFunc = 60

// The CLI's largest function is under maxCLIFunc lines (from func to its closing brace).
func TestCLIFunctionsSmall(t *testing.T) {
	t.Parallel()
	type fn struct {
		name  string
		lines int
	}
	var fns []fn
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(root, "cmd/ansight/internal/cli/*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no files in cmd/ansight/internal/cli (%v)", err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				name = recvName(fd.Recv.List[0].Type) + "." + name
			}
			start := fset.Position(fd.Pos())
			fns = append(fns, fn{fmt.Sprintf("%s:%d %s", filepath.Base(path), start.Line, name), fset.Position(fd.End()).Line - start.Line + 1})
		}
	}
	sort.Slice(fns, func(i, j int) bool { return fns[i].lines > fns[j].lines })
	var top []string
	for i := 0; i < 5 && i < len(fns); i++ {
		top = append(top, fmt.Sprintf("%s (%d lines)", fns[i].name, fns[i].lines))
	}
	if fns[0].lines >= maxCLIFunc {
		t.Errorf("the CLI has functions of %d lines or more; split them (an options struct and a run function); the five largest:\n\t%s", maxCLIFunc, strings.Join(top, "\n\t"))
	} else {
		t.Logf("largest CLI functions: %s", strings.Join(top, "; "))
	}
}

func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}

// What clients link is checked in the nested module test/outside (a module outside ours,
// where internal/ cannot be imported), which this module's go test ./... does not reach:
// the tests must stay there, and CI must run them.
func TestOutsideChecksKept(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(root, "test/outside/*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				found[fd.Name.Name] = true
			}
		}
	}
	for _, name := range []string{"TestSDKAppsCompileNoTooling", "TestContractClientsLinkNoHost"} {
		if !found[name] {
			t.Errorf("test/outside has no %s", name)
		}
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci/run"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(ci, []byte("cd test/outside && ")) || !bytes.Contains(ci, []byte("go test")) {
		t.Error(".ci/run no longer runs the tests of test/outside")
	}
}

// figures.go is a script (go:build ignore), so go vet and go test do not build it: build it
// here so that it cannot rot.
func TestFiguresScriptBuilds(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "build", "-o", filepath.Join(t.TempDir(), "figures"), "figures.go")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build figures.go: %v\n%s", err, out)
	}
}
