package files

import (
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
