package flow

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// FileKind says what a file found under a directory is.
type FileKind string

// The kinds Discover reports.
const (
	// FileFlow: its top-level schema is ansight.flow/v1 (it may still have mistakes).
	FileFlow FileKind = "flow"
	// FileOfficialTest: an official workspace test (test-definition.v1).
	FileOfficialTest FileKind = "official-test"
)

// Entry is one file Discover found: a flow (loaded, or with the mistakes that keep it from
// loading) or an official workspace test.
type Entry struct {
	Path string
	Kind FileKind
	Flow *Flow
	// Err is the flow's mistakes (an ErrorList), or the *OfficialTestError of an official test.
	Err error
}

// maxDiscovered bounds the files one Discover reads.
const maxDiscovered = 4096

// Discover finds the flows named by paths: a file is a flow whatever it holds (a file that
// is not one gets its mistakes), a directory is searched (hidden ones skipped) for *.yaml,
// *.yml and *.json files whose top-level schema is ansight.flow/v1, and official workspace
// tests (test-definition.v1) among them are reported as such. Other files under a directory
// are not flows and are left out, and so are the flows another one found there includes
// (its parts). Entries come in path order.
func Discover(paths []string) ([]Entry, error) {
	var out []Entry
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, errorf(Pos{File: p}, "%v", unwrapPath(err))
		}
		if !st.IsDir() {
			out = append(out, loadEntry(p))
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, de fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := de.Name()
			if de.IsDir() {
				if path != p && strings.HasPrefix(name, ".") || name == "node_modules" {
					return filepath.SkipDir
				}
				return nil
			}
			switch strings.ToLower(filepath.Ext(name)) {
			case ".yaml", ".yml", ".json":
				found = append(found, path)
			}
			if len(found) > maxDiscovered {
				return errors.New("more than 4096 candidate files")
			}
			return nil
		})
		if err != nil {
			return nil, errorf(Pos{File: p}, "%v", err)
		}
		slices.Sort(found)
		var dirEntries []Entry
		for _, path := range found {
			e, ok := sniffEntry(path)
			if ok {
				dirEntries = append(dirEntries, e)
			}
		}
		out = append(out, withoutParts(dirEntries)...)
	}
	return out, nil
}

// withoutParts leaves out the flows another flow of the list includes: they are parts of
// it (checked and run with its variables), not flows of their own.
func withoutParts(entries []Entry) []Entry {
	included := map[string]bool{}
	var walk func(f *Flow)
	walk = func(f *Flow) {
		for _, list := range [][]*Step{f.Setup, f.Steps, f.Teardown} {
			for _, s := range list {
				if s.Included != nil {
					if abs, err := filepath.Abs(s.Included.File); err == nil && !included[abs] {
						included[abs] = true
						walk(s.Included)
					}
				}
			}
		}
	}
	for _, e := range entries {
		if e.Flow != nil {
			walk(e.Flow)
		}
	}
	kept := entries[:0]
	for _, e := range entries {
		if abs, err := filepath.Abs(e.Path); err == nil && included[abs] {
			continue
		}
		kept = append(kept, e)
	}
	return kept
}

// loadEntry loads a file named on the command line.
func loadEntry(path string) Entry {
	f, err := Load(path)
	e := Entry{Path: path, Kind: FileFlow, Flow: f, Err: err}
	if oe, ok := errors.AsType[*OfficialTestError](err); ok {
		e.Kind = FileOfficialTest
		if oe.ID == "" {
			oe.ID = officialTestID(path)
		}
	}
	return e
}

// sniffEntry loads a file found under a directory when it is a flow or an official test.
func sniffEntry(path string) (Entry, bool) {
	data, err := readBounded(path)
	if err != nil {
		return Entry{}, false
	}
	root, err := readFile(path, data)
	if err != nil || root.kind != kindObject {
		return Entry{}, false
	}
	if s := root.get("schema"); s == nil || s.kind != kindString || s.text != Schema {
		if _, ok := officialTest(root); !ok {
			return Entry{}, false
		}
	}
	return loadEntry(path), true
}

// officialTestID is the id the official CLI gives a test without one: its path under
// ansight/tests/ without the extension, '/' written '.'.
func officialTestID(path string) string {
	slash := filepath.ToSlash(path)
	if i := strings.LastIndex(slash, "ansight/tests/"); i >= 0 {
		slash = slash[i+len("ansight/tests/"):]
	} else {
		slash = filepath.Base(slash)
	}
	slash = strings.TrimSuffix(slash, filepath.Ext(slash))
	return strings.ReplaceAll(slash, "/", ".")
}

// OfficialRunForm reports whether args are the official CLI's 'test run <workspace>
// <test-id>': a directory holding ansight/tests/, then an id that names no file. It returns
// the workspace and the id.
func OfficialRunForm(args []string) (workspace, testID string, ok bool) {
	if len(args) != 2 {
		return "", "", false
	}
	if st, err := os.Stat(filepath.Join(args[0], "ansight", "tests")); err != nil || !st.IsDir() {
		return "", "", false
	}
	if _, err := os.Stat(args[1]); err == nil {
		return "", "", false
	}
	return args[0], args[1], true
}
