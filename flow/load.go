package flow

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Load reads the flow file at path, with the flows it includes (paths relative to the
// including file). Every mistake comes back as an ErrorList naming the file, line, column
// and step; an official workspace test comes back as an *OfficialTestError.
func Load(path string) (*Flow, error) {
	data, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse reads a flow from data, named file in errors; includes are read relative to file's
// directory.
func Parse(file string, data []byte) (*Flow, error) {
	l := &loader{files: map[string]*Flow{}}
	return l.parse(file, data, nil)
}

// readBounded reads a file of at most MaxFileSize bytes, refusing a larger one before
// reading it (and one that grows while it is read).
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errorf(Pos{File: path}, "%v", unwrapPath(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, errorf(Pos{File: path}, "%v", unwrapPath(err))
	}
	if !st.Mode().IsRegular() {
		return nil, errorf(Pos{File: path}, "not a regular file")
	}
	if st.Size() > MaxFileSize {
		return nil, errorf(Pos{File: path}, "the file is %d bytes; a flow is at most %d (1 MiB)", st.Size(), MaxFileSize)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, errorf(Pos{File: path}, "%v", unwrapPath(err))
	}
	if len(data) > MaxFileSize {
		return nil, errorf(Pos{File: path}, "the file grew past %d bytes while it was read", MaxFileSize)
	}
	return data, nil
}

func unwrapPath(err error) error {
	if pe, ok := errors.AsType[*os.PathError](err); ok {
		return pe.Err
	}
	return err
}

// loader reads a flow and its includes once each.
type loader struct {
	files map[string]*Flow // by absolute path: a file included twice (not in a cycle) is read once
}

func (l *loader) parse(file string, data []byte, chain []string) (*Flow, error) {
	root, err := readFile(file, data)
	if err != nil {
		return nil, err
	}
	if id, ok := officialTest(root); ok {
		return nil, &OfficialTestError{File: file, ID: id}
	}
	f, err := decodeFlow(file, root)
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(file)
	chain = append(chain, abs)
	var errs ErrorList
	for _, phase := range [][]*Step{f.Setup, f.Steps, f.Teardown} {
		for _, s := range phase {
			if s.Kind != KindInclude {
				continue
			}
			inc, err := l.include(file, s, chain)
			if err != nil {
				errs = append(errs, Errors(err)...)
				if len(Errors(err)) == 0 {
					errs = append(errs, &Error{Pos: s.Pos, Step: s.Label(), Msg: err.Error()})
				}
				continue
			}
			s.Included = inc
		}
	}
	if len(errs) > 0 {
		return nil, errs[:min(len(errs), maxErrors)]
	}
	if n := f.Count(); n > MaxSteps {
		return nil, errorf(Pos{File: file}, "the flow has %d steps with its includes; at most %d", n, MaxSteps)
	}
	return f, nil
}

func (l *loader) include(from string, s *Step, chain []string) (*Flow, error) {
	path := s.Include
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(from), path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	for i, c := range chain {
		if c == abs {
			names := make([]string, 0, len(chain)-i+1)
			for _, p := range chain[i:] {
				names = append(names, filepath.Base(p))
			}
			names = append(names, filepath.Base(abs))
			return nil, &Error{Pos: s.Pos, Step: s.Label(), Msg: "include cycle: " + strings.Join(names, " → ")}
		}
	}
	if len(chain) >= MaxIncludeDepth {
		return nil, &Error{Pos: s.Pos, Step: s.Label(), Msg: fmt.Sprintf("includes nest more than %d deep", MaxIncludeDepth)}
	}
	if f, ok := l.files[abs]; ok {
		return f, nil
	}
	data, err := readBounded(path)
	if err != nil {
		return nil, &Error{Pos: s.Pos, Step: s.Label(), Msg: err.Error()}
	}
	f, err := l.parse(path, data, chain)
	if err != nil {
		if oe, ok := errors.AsType[*OfficialTestError](err); ok {
			return nil, &Error{Pos: s.Pos, Step: s.Label(), Msg: oe.Error()}
		}
		return nil, err
	}
	l.files[abs] = f
	return f, nil
}

// OfficialTestError is the answer for a file that is an official workspace test
// (test-definition.v1): a prompt for the official CLI's hosted agent, with no steps, which
// this runner does not mis-read as a flow.
type OfficialTestError struct {
	File string
	// ID is the test's id: its id member, else its path under ansight/tests/ without the
	// extension, '/' written '.', as the official CLI names it.
	ID string
}

func (e *OfficialTestError) Error() string {
	return fmt.Sprintf("%s is an official workspace test (test-definition.v1, id %q): a prompt for the official CLI's hosted agent, with no steps to run here; 'ansight test' runs %s flows (docs/flows.md#official-workspace-tests)", e.File, e.ID, Schema)
}

// officialTest reports whether root is an official test-definition.v1 document: no schema
// member, and the members that one requires (prompt, validation or appId), or its
// schemaVersion.
func officialTest(root *value) (string, bool) {
	if root.kind != kindObject || root.get("schema") != nil {
		return "", false
	}
	if root.get("schemaVersion") == nil && (root.get("prompt") == nil || (root.get("validation") == nil && root.get("appId") == nil)) {
		return "", false
	}
	id := root.get("id")
	if id != nil && id.kind == kindString {
		return id.text, true
	}
	return "", true
}
