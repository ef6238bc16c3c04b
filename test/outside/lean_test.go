package outside_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const ansight = "github.com/ansight-go/ansight"

// toolingModules are the dependencies only the tooling uses: the CLI (cobra, the QR
// encoder), the MCP bridge (the MCP SDK), the demo's renderer (x/image), the recordings
// (SQLite) and the device lab (NATS). An app must compile none of them.
var toolingModules = []string{
	"github.com/spf13/cobra",
	"github.com/spf13/pflag",
	"github.com/modelcontextprotocol/go-sdk",
	"golang.org/x/image",
	"github.com/skip2/go-qrcode",
	"modernc.org/sqlite",
	"modernc.org/libc",
	"github.com/nats-io/nats.go",
	"github.com/nats-io/nats-server/v2",
}

// toolingPackages are ansight-go's own packages for hosts and tools; an app compiles none.
var toolingPackages = []string{"cmd", "host", "mcpbridge", "player", "recording", "conformance",
	"hostapi", "examples", "fleet"}

// sdkApps are the SDK-only apps checked: app and app/connect alone (the smallest app), and
// every SDK package at once.
var sdkApps = []string{"minimal", "full"}

// An SDK-only app compiles none of the tooling, although the tooling lives in the same
// module. The figures of each app's own module (a fresh module with only the app, tidied)
// are logged: run with -v to see them.
func TestSDKAppsCompileNoTooling(t *testing.T) {
	t.Parallel()
	for _, name := range sdkApps {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			deps := goCmd(t, ".", nil, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./sdkapp/"+name)
			for _, pkg := range lines(deps) {
				if m := toolingModuleOf(pkg); m != "" {
					t.Errorf("the app compiles %s (module %s)", pkg, m)
				}
				if isToolingPackage(pkg) {
					t.Errorf("the app compiles the tooling package %s", pkg)
				}
			}
			if !slices.Contains(lines(deps), ansight+"/app/connect") {
				t.Errorf("go list -deps misses app/connect: the check looks at the wrong packages:\n%s", deps)
			}

			f := measure(t, name)
			for _, line := range lines(f.goSum) {
				if m := toolingModuleOf(strings.Fields(line)[0]); m != "" {
					t.Errorf("the app's go.sum names %s: the module was downloaded", m)
				}
			}
			t.Logf("%s: go directive %s; go.sum %d lines; go mod graph %d edges, %d from ansight-go, of which %d to modules the app never compiles (version floors only); go list -deps %d packages (%d outside the standard library) from %d modules",
				name, f.goVersion, len(lines(f.goSum)), len(f.edges), len(f.fromAnsight), len(f.floorsOnly),
				f.packages, f.nonStd, len(f.modules))
			t.Logf("%s: compiled modules: %s", name, strings.Join(f.modules, ", "))
			t.Logf("%s: in the graph, never compiled: %s", name, strings.Join(f.floorsOnly, ", "))
		})
	}
}

// figures describe the module of one SDK-only app.
type figures struct {
	goVersion        string
	goSum            string
	edges            []string
	fromAnsight      []string // edges from ansight-go to its requirements
	floorsOnly       []string // requirements of ansight-go the app does not compile
	packages, nonStd int
	modules          []string // modules that provide compiled packages
}

// measure makes a fresh module holding only the app sdkapp/name, requiring this checkout,
// tidies it and reads its figures. It copies this repository's go.sum first so that tidy
// needs no network (GOPROXY=off): every module it needs is in the module cache already.
func measure(t *testing.T, name string) figures {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("sdkapp", name, "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	mod := fmt.Sprintf("module example.com/%s\n\ngo 1.26.0\n\nrequire %s v0.0.0\n\nreplace %s => %s\n", name, ansight, ansight, root)
	for file, data := range map[string][]byte{"main.go": src, "go.sum": sum, "go.mod": []byte(mod)} {
		if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	offline := []string{"GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off"}
	goCmd(t, dir, offline, "mod", "tidy")

	var f figures
	f.goVersion = strings.TrimSpace(goCmd(t, dir, offline, "list", "-m", "-f", "{{.GoVersion}}"))
	gs, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	f.goSum = string(gs)
	f.edges = lines(goCmd(t, dir, offline, "mod", "graph"))
	f.packages = len(lines(goCmd(t, dir, offline, "list", "-deps", ".")))
	f.nonStd = len(lines(goCmd(t, dir, offline, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".")))
	mods := lines(goCmd(t, dir, offline, "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", "."))
	slices.Sort(mods)
	f.modules = slices.Compact(mods)
	for _, e := range f.edges {
		from, to, _ := strings.Cut(e, " ")
		if !strings.HasPrefix(from, ansight+"@") || strings.HasPrefix(to, "go@") {
			continue
		}
		f.fromAnsight = append(f.fromAnsight, to)
		if path, _, _ := strings.Cut(to, "@"); !slices.Contains(f.modules, path) {
			f.floorsOnly = append(f.floorsOnly, to)
		}
	}
	return f
}

// toolingModuleOf returns the tooling module that provides pkg (a package path, or a
// module path with an @version), or "".
func toolingModuleOf(pkg string) string {
	pkg, _, _ = strings.Cut(pkg, "@")
	for _, m := range toolingModules {
		if pkg == m || strings.HasPrefix(pkg, m+"/") {
			return m
		}
	}
	return ""
}

// isToolingPackage reports whether pkg is one of ansight-go's tooling packages.
func isToolingPackage(pkg string) bool {
	rel, ok := strings.CutPrefix(pkg, ansight+"/")
	if !ok {
		return false
	}
	for _, p := range toolingPackages {
		if rel == p || strings.HasPrefix(rel, p+"/") {
			return true
		}
	}
	return false
}

// goCmd runs the go command in dir with extra environment and returns its output.
func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed: %v", err)
	}
	cmd := exec.Command(gobin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// lines returns the non-empty lines of s.
func lines(s string) []string {
	var out []string
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
