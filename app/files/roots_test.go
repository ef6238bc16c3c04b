package files

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzResolve checks the lexical half of path confinement: whatever the root and path
// arguments, resolve either fails or returns a path inside one of the roots (the other
// half, symbolic links, is os.Root's and is covered by the tool tests).
func FuzzResolve(f *testing.F) {
	dir := f.TempDir()
	t, err := newTree(Options{Roots: []Root{{Alias: "docs", Path: dir}, {Alias: "tmp", Path: f.TempDir()}}})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][2]string{
		{"", ""}, {"docs", ".."}, {"", "../x"}, {"DOCS", "a/../../b"}, {"", "/etc/passwd"},
		{dir, "a"}, {"", dir + "/../x"}, {"tmp", dir}, {"", "a\x00b"}, {"", `..\..\x`}, {"nope", "a"},
	} {
		f.Add(seed[0], seed[1])
	}
	exists := func(target) bool { return false }
	f.Fuzz(func(t2 *testing.T, rootArg, pathArg string) {
		g, err := t.resolve(rootArg, pathArg, exists)
		if err != nil {
			if g.root != nil {
				t2.Fatalf("resolve(%q, %q) failed but returned a root", rootArg, pathArg)
			}
			return
		}
		if g.rel != "." && !filepath.IsLocal(g.rel) {
			t2.Fatalf("resolve(%q, %q) = %q, not local", rootArg, pathArg, g.rel)
		}
		if abs := g.abs(); abs != g.root.Path && !strings.HasPrefix(abs, g.root.Path+string(filepath.Separator)) {
			t2.Fatalf("resolve(%q, %q) = %s, outside %s", rootArg, pathArg, abs, g.root.Path)
		}
	})
}

// A directory with more entries than maxDirEntries is read up to the bound, and says so.
func TestReadDirBound(t *testing.T) {
	dir := t.TempDir()
	for i := range 5 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer func(n int) { maxDirEntries = n }(maxDirEntries)
	for _, tt := range []struct {
		bound, want int
		more        bool
	}{{3, 3, true}, {5, 5, false}, {6, 5, false}} {
		t.Run(fmt.Sprintf("bound %d", tt.bound), func(t *testing.T) { // not parallel: they set maxDirEntries
			maxDirEntries = tt.bound
			children, more, err := readDir(r, ".")
			if err != nil || len(children) != tt.want || more != tt.more {
				t.Errorf("%d entries, more %v, %v", len(children), more, err)
			}
		})
	}
}
