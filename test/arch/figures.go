//go:build ignore

// Figures prints issue 23's before/after measures of a checkout of this module:
//
//	go run ./test/arch/figures.go [-C dir]
//
// run from this module (dir defaults to "."; give another checkout, e.g. a `git worktree
// add /tmp/before 24060c7`, to measure it). It is a script rather than a test because it
// must measure commits that predate test/arch; the architecture test (arch_test.go)
// checks the same properties on this checkout.
//
// Measures:
//   - lines of Go under internal/ (every .go file, tests included) and their share of
//     the module's (nested modules, such as test/outside, left out);
//   - the import graph between top-level folders (`go list -f '{{.ImportPath}}
//     {{.Imports}}' ./...`, each top-level folder one node, internal/ one node, test
//     imports left out): its arrows, and how many run upward in the best order there is
//     (a folder ranked above everything it imports wherever the graph lets it: the
//     fewest arrows any order of the folders leaves upward, found exactly over all
//     orders), plus the arrows out of internal/ (upward when internal/ is ranked as the
//     leaves it is meant to be);
//   - the packages `go list -deps` links for mcpbridge and for a program in an outside
//     module that imports hostapi alone: total, of this module, and whether a host,
//     recording or SQLite package is among them;
//   - the five largest functions (lines from `func` to its closing brace) of the CLI
//     package (cmd/ansight/internal/cli, or internal/cli before the re-layer).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

const module = "github.com/ansight-go/ansight"

func main() {
	dir := flag.String("C", ".", "the checkout of the module to measure")
	flag.Parse()
	root, err := filepath.Abs(*dir)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("checkout %s (%s)\n", root, strings.TrimSpace(run(root, "git", "log", "-1", "--format=%h %cs")))
	lines(root)
	graph(root)
	deps(root)
	largest(root)
}

func run(dir string, name string, args ...string) string {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		log.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// lines counts the lines of every .go file of the module, and of those under internal/.
func lines(root string) {
	var all, internal, allNonTest, internalNonTest int
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || fileExists(filepath.Join(path, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n := bytes.Count(data, []byte("\n"))
		rel, _ := filepath.Rel(root, path)
		in := strings.HasPrefix(filepath.ToSlash(rel), "internal/")
		test := strings.HasSuffix(path, "_test.go")
		all += n
		if !test {
			allNonTest += n
		}
		if in {
			internal += n
			if !test {
				internalNonTest += n
			}
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("lines of Go in internal/: %d of %d (%.1f%%); without tests %d of %d (%.1f%%)\n",
		internal, all, pct(internal, all), internalNonTest, allNonTest, pct(internalNonTest, allNonTest))
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func pct(a, b int) float64 { return 100 * float64(a) / float64(b) }

// folder is the graph node of a package of the module: its top-level folder.
func folder(pkg string) string {
	rel := strings.TrimPrefix(pkg, module+"/")
	top, _, _ := strings.Cut(rel, "/")
	return top
}

func graph(root string) {
	out := run(root, "go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	edges := map[[2]string]bool{}
	nodes := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		from := folder(f[0])
		nodes[from] = true
		for _, imp := range f[1:] {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			to := folder(imp)
			nodes[to] = true
			if to != from {
				edges[[2]string{from, to}] = true
			}
		}
	}
	names := make([]string, 0, len(nodes))
	for n := range nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	index := map[string]int{}
	for i, n := range names {
		index[n] = i
	}
	// in[i]: the nodes with an arrow into i. Placing the nodes from the bottom up, a node
	// placed after (above) the ones already placed adds an upward arrow for every arrow
	// from a placed node to it.
	in := make([]uint32, len(names))
	var fromInternal []string
	for e := range edges {
		in[index[e[1]]] |= 1 << index[e[0]]
		if e[0] == "internal" {
			fromInternal = append(fromInternal, e[1])
		}
	}
	n := len(names)
	if n > 24 {
		log.Fatalf("%d folders: too many for the exact search", n)
	}
	best := make([]int8, 1<<n) // fewest upward arrows among the nodes of a set placed lowest
	for s := 1; s < 1<<n; s++ {
		best[s] = 127
		for rest := s; rest != 0; rest &= rest - 1 {
			i := bits.TrailingZeros(uint(rest))
			prev := s &^ (1 << i)
			if c := best[prev] + int8(bits.OnesCount32(in[i]&uint32(prev))); c < best[s] {
				best[s] = c
			}
		}
	}
	sort.Strings(fromInternal)
	fmt.Printf("folder-level arrows: %d between %d folders; upward in the best order: %d of %d\n",
		len(edges), n, best[1<<n-1], len(edges))
	fmt.Printf("arrows out of internal/ (upward with internal/ ranked as leaves): %d %v\n", len(fromInternal), fromInternal)
}

// deps lists what mcpbridge and an outside hostapi client link.
func deps(root string) {
	outside, err := os.MkdirTemp("", "hostapiclient")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(outside)
	gomod := fmt.Sprintf("module example.com/hostapiclient\n\ngo 1.26.0\n\nrequire %s v0.0.0\n\nreplace %s => %s\n", module, module, root)
	main := "package main\n\nimport _ \"" + module + "/hostapi\"\n\nfunc main() {}\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		log.Fatal(err)
	}
	for name, data := range map[string][]byte{"go.mod": []byte(gomod), "main.go": []byte(main), "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(outside, name), data, 0o644); err != nil {
			log.Fatal(err)
		}
	}
	report := func(name, dir, pkg string) {
		cmd := exec.Command("go", "list", "-mod=mod", "-deps", "-f", "{{.Standard}} {{.ImportPath}}", pkg)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=", "GOPROXY=off")
		cmd.Stderr = io.Discard
		out, err := cmd.Output()
		if err != nil {
			log.Fatalf("go list -deps %s: %v", pkg, err)
		}
		var total, nonStd, own int
		var bad []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			std, path, _ := strings.Cut(line, " ")
			total++
			if std == "true" {
				continue
			}
			nonStd++
			if strings.HasPrefix(path, module+"/") || path == module {
				own++
			}
			for _, b := range []string{module + "/host", module + "/recording", "modernc.org/sqlite"} {
				if path == b || strings.HasPrefix(path, b+"/") {
					bad = append(bad, strings.TrimPrefix(path, module+"/"))
				}
			}
		}
		fmt.Printf("%s links %d packages (%d outside the standard library, %d of this module); host/recording/SQLite: %v\n",
			name, total, nonStd, own, orNone(bad))
	}
	report("mcpbridge", root, "./mcpbridge")
	report("an outside module importing only hostapi", outside, ".")
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// largest prints the five largest functions of the CLI package.
func largest(root string) {
	dir := filepath.Join(root, "cmd/ansight/internal/cli")
	if !fileExists(dir) {
		dir = filepath.Join(root, "internal/cli")
	}
	fset := token.NewFileSet()
	type fn struct {
		name  string
		lines int
	}
	var fns []fn
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			log.Fatal(err)
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
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			fns = append(fns, fn{filepath.Base(path) + ":" + name, n})
		}
	}
	sort.Slice(fns, func(i, j int) bool { return fns[i].lines > fns[j].lines })
	rel, _ := filepath.Rel(root, dir)
	fmt.Printf("largest functions of %s (%d functions):", rel, len(fns))
	for i := 0; i < 5 && i < len(fns); i++ {
		fmt.Printf(" %s %d;", fns[i].name, fns[i].lines)
	}
	fmt.Println()
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
