package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ansight-go/ansight/catalog"
)

// Root is a directory the app exposes.
type Root struct {
	// Alias names the root in requests and results ("documents", "logs"): a plain name
	// (letters, digits, '.', '_', '-'), unique among the roots regardless of case.
	Alias string
	// Path is the directory; it must exist when Register is called. Results report its
	// absolute form, as the official SDKs do.
	Path string
	// ReadOnly roots are listed and served, never written: files.push_file refuses them.
	ReadOnly bool
}

// Size limits unless Options say otherwise.
const (
	// DefaultMaxPushBytes bounds the content of one files.push_file. The content travels
	// base64-encoded inside one JSON message, a third larger than the file.
	DefaultMaxPushBytes = 16 << 20
	// DefaultMaxDownloadBytes bounds the files files.begin_binary_download serves.
	DefaultMaxDownloadBytes = 4 << 30
	// maxPathLength bounds a path argument.
	maxPathLength = 4096
)

// Options configures the file tools.
type Options struct {
	// Roots are the directories the tools work in; at least one. The first is the default
	// root of a request that names none.
	Roots []Root
	// MaxPushBytes bounds the content of one pushed file (DefaultMaxPushBytes when ≤ 0).
	MaxPushBytes int64
	// MaxDownloadBytes bounds a file files.begin_binary_download serves
	// (DefaultMaxDownloadBytes when ≤ 0).
	MaxDownloadBytes int64
	// MaxCopyBytes bounds a file files.copy_file copies, and files.move_file moves across
	// roots (DefaultMaxCopyBytes when ≤ 0).
	MaxCopyBytes int64
}

// tree is the configured roots, checked.
type tree struct {
	roots []Root // aliases checked, paths absolute and clean
	opts  Options
}

// newTree checks the options and fills their defaults.
func newTree(opts Options) (*tree, error) {
	if len(opts.Roots) == 0 {
		return nil, errors.New("files: Options.Roots is empty")
	}
	t := &tree{opts: opts}
	seen := map[string]bool{}
	for _, r := range opts.Roots {
		if err := catalog.CheckID(r.Alias); err != nil || strings.ContainsAny(r.Alias, "/\\") {
			return nil, fmt.Errorf("files: root alias %q is not a plain name", r.Alias)
		}
		if seen[strings.ToLower(r.Alias)] {
			return nil, fmt.Errorf("files: two roots are called %q", r.Alias)
		}
		seen[strings.ToLower(r.Alias)] = true
		abs, err := filepath.Abs(r.Path)
		if err != nil {
			return nil, fmt.Errorf("files: root %q: %w", r.Alias, err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("files: root %q: %s is not a directory", r.Alias, abs)
		}
		r.Path = abs
		t.roots = append(t.roots, r)
	}
	if t.opts.MaxPushBytes <= 0 {
		t.opts.MaxPushBytes = DefaultMaxPushBytes
	}
	if t.opts.MaxDownloadBytes <= 0 {
		t.opts.MaxDownloadBytes = DefaultMaxDownloadBytes
	}
	if t.opts.MaxCopyBytes <= 0 {
		t.opts.MaxCopyBytes = DefaultMaxCopyBytes
	}
	return t, nil
}

// rootInfo is a root as results list it (availableRoots).
type rootInfo struct {
	Alias string `json:"alias"`
	Path  string `json:"path"`
}

func (t *tree) available() []rootInfo {
	out := make([]rootInfo, len(t.roots))
	for i, r := range t.roots {
		out[i] = rootInfo{r.Alias, r.Path}
	}
	return out
}

// target is a resolved request path: a root and a path inside it.
type target struct {
	root *Root
	rel  string // clean, OS separators, local ("." for the root itself)
}

// abs is the target's absolute path, for results (never for file operations, which go
// through os.Root).
func (g target) abs() string { return filepath.Join(g.root.Path, g.rel) }

// slash is the target's path relative to its root, with forward slashes.
func (g target) slash() string { return filepath.ToSlash(g.rel) }

// open opens the target's root. Every file operation goes through it, so that no path
// leaves the root: not by "..", not by an absolute path, not by a symbolic link.
func (g target) open() (*os.Root, error) { return os.OpenRoot(g.root.Path) }

// resolve turns a request's root and path arguments into a target. rootArg names a root
// by alias (any case) or by its absolute path; empty means the root that holds path when
// exactly one does (exists says whether a relative path is there), else the first root.
// pathArg is relative to the root, or absolute inside it; empty means the root itself.
// The result is only lexically inside the root: symbolic links are checked by the
// os.Root operations that use it.
func (t *tree) resolve(rootArg, pathArg string, exists func(target) bool) (target, error) {
	if len(pathArg) > maxPathLength || len(rootArg) > maxPathLength {
		return target{}, failure(reasonOutsideRoot, "the path is longer than %d bytes", maxPathLength)
	}
	if strings.ContainsRune(pathArg, 0) || strings.ContainsRune(rootArg, 0) {
		return target{}, failure(reasonOutsideRoot, "the path contains a NUL byte")
	}
	var root *Root
	if rootArg != "" {
		if root = t.root(rootArg); root == nil {
			return target{}, failure(reasonRootUnknown, "there is no root %q (roots: %s)", rootArg, t.aliases())
		}
	}
	if filepath.IsAbs(pathArg) || strings.HasPrefix(pathArg, "/") {
		abs := filepath.Clean(filepath.FromSlash(pathArg))
		for i := range t.roots {
			r := &t.roots[i]
			if root != nil && root != r {
				continue
			}
			if rel, err := filepath.Rel(r.Path, abs); err == nil && (rel == "." || filepath.IsLocal(rel)) {
				return target{r, rel}, nil
			}
		}
		return target{}, failure(reasonOutsideRoot, "%s is outside the app's roots (%s)", pathArg, t.aliases())
	}
	rel := filepath.Clean(filepath.FromSlash(pathArg))
	if rel != "." && !filepath.IsLocal(rel) {
		return target{}, failure(reasonOutsideRoot, "%q leaves its root", pathArg)
	}
	if root != nil {
		return target{root, rel}, nil
	}
	var found []target
	if rel != "." {
		for i := range t.roots {
			if g := (target{&t.roots[i], rel}); exists(g) {
				found = append(found, g)
			}
		}
	}
	switch len(found) {
	case 0:
		return target{&t.roots[0], rel}, nil
	case 1:
		return found[0], nil
	}
	var names []string
	for _, g := range found {
		names = append(names, g.root.Alias)
	}
	return target{}, failure(reasonAmbiguousPath, "%q exists in the roots %s: name one with root", pathArg, strings.Join(names, ", "))
}

// root returns the root named by alias (any case) or absolute path, or nil.
func (t *tree) root(name string) *Root {
	for i := range t.roots {
		if strings.EqualFold(t.roots[i].Alias, name) {
			return &t.roots[i]
		}
	}
	if filepath.IsAbs(name) {
		clean := filepath.Clean(name)
		for i := range t.roots {
			if t.roots[i].Path == clean {
				return &t.roots[i]
			}
		}
	}
	return nil
}

func (t *tree) aliases() string {
	names := make([]string, len(t.roots))
	for i, r := range t.roots {
		names[i] = r.Alias
	}
	return strings.Join(names, ", ")
}

// stat returns what the target is, following symbolic links inside the root.
func (g target) stat() (fs.FileInfo, error) {
	r, err := g.open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Stat(g.rel)
}

// isDir and isFile tell whether the target exists as a directory or a regular file
// (resolve's exists functions).
func isDir(g target) bool  { fi, err := g.stat(); return err == nil && fi.IsDir() }
func isFile(g target) bool { fi, err := g.stat(); return err == nil && fi.Mode().IsRegular() }

// fsFailure explains a failed file operation on g: a path that escaped its root, a
// missing file, or another error.
func fsFailure(g target, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return failure(reasonNotFound, "%s does not exist in root %q", g.slash(), g.root.Alias)
	case escapes(err):
		return failure(reasonOutsideRoot, "%s leads outside root %q", g.slash(), g.root.Alias)
	}
	return failure(reasonIO, "%s in root %q: %v", g.slash(), g.root.Alias, unwrapPath(err))
}

// escapes reports whether err is os.Root refusing a path that leaves the root (through
// ".." or a symbolic link). os exports no sentinel for it.
func escapes(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes")
}

// unwrapPath drops the path of a *fs.PathError: messages name the path relative to its
// root, never the app's absolute file system layout.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
