package files

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ansight-go/ansight/app"
)

// Bounds of files.list_directory (the official SDKs' numbers).
const (
	defaultMaxEntries     = 200
	maxMaxEntries         = 1000
	defaultRecursiveDepth = 5
	maxRecursiveDepth     = 16
)

// maxDirEntries bounds what one directory read keeps in memory: a listing of a directory
// with more entries covers the first ones read and says it is truncated. A variable for
// tests.
var maxDirEntries = 100_000

type listArgs struct {
	Root          *string `json:"root,omitzero" jsonschema:"the root's alias (default: the root that holds path, else the first)"`
	Path          *string `json:"path,omitzero" jsonschema:"the directory, relative to the root (default: the root itself)"`
	IncludeHidden *bool   `json:"includeHidden,omitzero" jsonschema:"include entries whose name starts with a dot (default false)"`
	Recursive     *bool   `json:"recursive,omitzero" jsonschema:"list subdirectories too, breadth-first (default false)"`
	MaxDepth      *int    `json:"maxDepth,omitzero" jsonschema:"levels to list when recursive, clamped to 1..16 (default 5)"`
	MaxEntries    *int    `json:"maxEntries,omitzero" jsonschema:"most entries to list, clamped to 1..1000 (default 200)"`
}

// entry is one listed file or directory.
type entry struct {
	Name          string    `json:"name"`
	Path          string    `json:"path" jsonschema:"absolute path"`
	RelativePath  string    `json:"relativePath" jsonschema:"path relative to the root, with forward slashes"`
	RootAlias     string    `json:"rootAlias"`
	Kind          string    `json:"kind" jsonschema:"directory or file"`
	SizeBytes     *int64    `json:"sizeBytes" jsonschema:"a file's size; null for a directory"`
	FileExtension *string   `json:"fileExtension"`
	MimeType      *string   `json:"mimeType"`
	LastModified  time.Time `json:"lastModifiedUtc"`
	IsHidden      bool      `json:"isHidden"`
}

type listResult struct {
	RootAlias      string     `json:"rootAlias"`
	RootPath       string     `json:"rootPath"`
	DirectoryPath  string     `json:"directoryPath" jsonschema:"the listed directory's absolute path"`
	RelativePath   string     `json:"relativePath"`
	AvailableRoots []rootInfo `json:"availableRoots"`
	Entries        []entry    `json:"entries" jsonschema:"per directory, subdirectories then files, by name"`
	Truncated      bool       `json:"truncated" jsonschema:"maxEntries left entries out"`
	CapturedAtUtc  time.Time  `json:"capturedAtUtc"`
}

// list runs files.list_directory: breadth-first from the directory, each directory's
// subdirectories then its files, by name. Symbolic links are listed as what they point to
// when that is inside the root, left out otherwise, and never descended into (no cycles).
func (t *tree) list(ctx context.Context, c *app.Call, a listArgs) (*listResult, error) {
	g, err := t.resolve(str(a.Root), str(a.Path), isDir)
	if err != nil {
		return nil, toolFailure(CodeListFailed, g, err)
	}
	r, err := g.open()
	if err != nil {
		return nil, toolFailure(CodeListFailed, g, fsFailure(g, err))
	}
	defer r.Close()
	if fi, err := r.Stat(g.rel); err != nil {
		return nil, toolFailure(CodeListFailed, g, fsFailure(g, err))
	} else if !fi.IsDir() {
		return nil, toolFailure(CodeListFailed, g, failure(reasonNotADirectory, "%s in root %q is not a directory", g.slash(), g.root.Alias))
	}
	maxDepth := 1
	if flag(a.Recursive) {
		maxDepth = clamp(a.MaxDepth, defaultRecursiveDepth, 1, maxRecursiveDepth)
	}
	maxEntries := clamp(a.MaxEntries, defaultMaxEntries, 1, maxMaxEntries)

	res := &listResult{RootAlias: g.root.Alias, RootPath: g.root.Path, DirectoryPath: g.abs(), RelativePath: g.slash(),
		AvailableRoots: t.available(), Entries: []entry{}, CapturedAtUtc: c.Now().UTC()}
	type dir struct {
		rel   string
		depth int
	}
	queue := []dir{{g.rel, 0}}
	for len(queue) > 0 && !res.Truncated {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d := queue[0]
		queue = queue[1:]
		children, more, err := readDir(r, d.rel)
		res.Truncated = res.Truncated || more
		if err != nil {
			if d.rel == g.rel {
				return nil, toolFailure(CodeListFailed, g, fsFailure(g, err))
			}
			continue // a subdirectory that vanished or cannot be read
		}
		for _, c := range children {
			if !flag(a.IncludeHidden) && hidden(c.name) {
				continue
			}
			if len(res.Entries) == maxEntries {
				res.Truncated = true
				break
			}
			rel := filepath.Join(d.rel, c.name)
			res.Entries = append(res.Entries, describeEntry(target{g.root, rel}, c.info))
			if c.info.IsDir() && !c.link && d.depth+1 < maxDepth {
				queue = append(queue, dir{rel, d.depth + 1})
			}
		}
	}
	return res, nil
}

// child is a directory entry with what it is (after following a symbolic link).
type child struct {
	name string
	info fs.FileInfo
	link bool
}

// readDir returns the entries of the directory rel of r, subdirectories first, each group
// by name, and whether it left entries out (more than maxDirEntries). Symbolic links are
// replaced by what they point to; links that leave the root or dangle are left out.
func readDir(r *os.Root, rel string) (_ []child, more bool, _ error) {
	f, err := r.OpenFile(rel, readFlags, 0)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	var des []fs.DirEntry
	for len(des) < maxDirEntries {
		batch, err := f.ReadDir(min(1024, maxDirEntries-len(des)))
		des = append(des, batch...)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false, err
		}
	}
	if len(des) == maxDirEntries {
		if next, _ := f.ReadDir(1); len(next) > 0 {
			more = true
		}
	}
	out := make([]child, 0, len(des))
	for _, de := range des {
		c := child{name: de.Name(), link: de.Type()&fs.ModeSymlink != 0}
		if c.link {
			c.info, err = r.Stat(filepath.Join(rel, c.name))
		} else {
			c.info, err = de.Info()
		}
		if err != nil {
			continue
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b child) int {
		if a.info.IsDir() != b.info.IsDir() {
			if a.info.IsDir() {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	return out, more, nil
}

func describeEntry(g target, fi fs.FileInfo) entry {
	e := entry{Name: fi.Name(), Path: g.abs(), RelativePath: g.slash(), RootAlias: g.root.Alias, Kind: "directory",
		LastModified: fi.ModTime().UTC(), IsHidden: hidden(fi.Name())}
	if !fi.IsDir() {
		size, mime := fi.Size(), mimeType(fi.Name())
		e.Kind, e.SizeBytes, e.FileExtension, e.MimeType = "file", &size, extension(fi.Name()), &mime
	}
	return e
}

// hidden is the official SDKs' rule on every platform: a name that starts with a dot.
func hidden(name string) bool { return strings.HasPrefix(name, ".") }

// str, flag and clamp read optional arguments: null and absent are the same.
func str(p *string) string {
	if p == nil {
		return ""
	}
	return strings.TrimSpace(*p)
}

func flag(p *bool) bool { return p != nil && *p }

func clamp(p *int, def, lo, hi int) int {
	if p == nil {
		return def
	}
	return max(lo, min(*p, hi))
}
