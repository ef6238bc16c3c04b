package files_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/files"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

// fullHarness exposes critical tools too (files.delete_file).
func (s *sandbox) fullHarness(t *testing.T) *apptest.Harness {
	t.Helper()
	a := app.New(app.Options{Clock: func() time.Time { return pinnedNow }, Guard: catalog.GuardFullAccess})
	if err := files.Register(a, s.options()); err != nil {
		t.Fatal(err)
	}
	return apptest.New(t, a)
}

func (s *sandbox) read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, rel))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

type transfer struct {
	RelativePath            string `json:"relativePath"`
	Operation               string `json:"operation"`
	Overwritten             bool   `json:"overwritten"`
	CreatedDirectory        bool   `json:"createdDirectory"`
	SourceRootAlias         string `json:"sourceRootAlias"`
	SourceRelativePath      string `json:"sourceRelativePath"`
	DestinationRootAlias    string `json:"destinationRootAlias"`
	DestinationRelativePath string `json:"destinationRelativePath"`
}

func TestCopyAndMove(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	h := s.harness(t, s.options())
	call := func(tool, args string) transfer {
		t.Helper()
		v, _ := h.Call(tool, args)
		var r transfer
		if err := wire.Unmarshal(v, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}

	// Copy into a new directory (created by default), from the read-only root.
	r := call(files.CopyFileToolID, `{"root":"logs","sourcePath":"app.log","destinationRoot":"docs","destinationPath":"copies/app.log"}`)
	if r.Operation != "copied" || !r.CreatedDirectory || r.Overwritten || r.SourceRootAlias != "logs" || r.DestinationRootAlias != "docs" ||
		r.DestinationRelativePath != "copies/app.log" || s.read(t, "docs/copies/app.log") != "started\n" || s.read(t, "logs/app.log") != "started\n" {
		t.Errorf("copy across roots: %+v", r)
	}
	// A relative destination stays in the source's root; overwrite as the flattened "1".
	r = call(files.CopyFileToolID, `{"root":"docs","sourcePath":"readme.md","destinationPath":"copies/app.log","overwrite":"1"}`)
	if !r.Overwritten || r.CreatedDirectory || s.read(t, "docs/copies/app.log") != "# Notes\n" {
		t.Errorf("overwriting copy: %+v", r)
	}
	// A link at the destination is replaced, never written through.
	r = call(files.CopyFileToolID, `{"root":"docs","sourcePath":"notes/a.txt","destinationPath":"alias.md","overwrite":true}`)
	if fi, err := os.Lstat(filepath.Join(s.docs, "alias.md")); err != nil || !fi.Mode().IsRegular() || s.read(t, "docs/readme.md") != "# Notes\n" {
		t.Errorf("a copy over a link: %+v (readme %q)", r, s.read(t, "docs/readme.md"))
	}
	// Move within a root: a rename.
	r = call(files.MoveFileToolID, `{"sourcePath":"notes/deep/b.txt","root":"docs","destinationPath":"moved/b.txt"}`)
	if r.Operation != "moved" || s.read(t, "docs/moved/b.txt") != "beta" || !strings.HasPrefix(s.read(t, "docs/notes/deep/b.txt"), "<") {
		t.Errorf("move: %+v", r)
	}
	// An absolute destination names its root.
	r = call(files.MoveFileToolID, `{"root":"docs","sourcePath":"moved/b.txt","destinationPath":"`+filepath.Join(s.docs, "b.txt")+`"}`)
	if r.DestinationRelativePath != "b.txt" || s.read(t, "docs/b.txt") != "beta" {
		t.Errorf("move to an absolute path: %+v", r)
	}

	for _, tc := range []struct {
		name, tool, args, reason string
	}{
		{"onto itself", files.CopyFileToolID, `{"root":"docs","sourcePath":"readme.md","destinationPath":"./notes/../readme.md"}`, "same_path"},
		{"an existing file", files.CopyFileToolID, `{"root":"docs","sourcePath":"readme.md","destinationPath":"b.txt"}`, "exists"},
		{"an existing directory", files.CopyFileToolID, `{"root":"docs","sourcePath":"readme.md","destinationPath":"notes","overwrite":true}`, "not_a_file"},
		{"no directory, none made", files.CopyFileToolID, `{"root":"docs","sourcePath":"readme.md","destinationPath":"new/x.md","createDirectory":"0"}`, "not_found"},
		{"into the read-only root", files.CopyFileToolID, `{"root":"docs","sourcePath":"readme.md","destinationRoot":"logs","destinationPath":"x.md"}`, "read_only"},
		{"out of the read-only root", files.MoveFileToolID, `{"root":"logs","sourcePath":"app.log","destinationRoot":"docs","destinationPath":"x.log"}`, "read_only"},
		{"destination up the tree", files.CopyFileToolID, `{"root":"docs","sourcePath":"readme.md","destinationPath":"../owned.md"}`, "outside_root"},
		{"destination through a link out", files.CopyFileToolID, `{"root":"docs","sourcePath":"readme.md","destinationPath":"escape/owned.md"}`, "outside_root"},
		{"source through a link out", files.CopyFileToolID, `{"root":"docs","sourcePath":"up","destinationPath":"stolen.txt"}`, "outside_root"},
		{"no source", files.MoveFileToolID, `{"destinationPath":"x"}`, "invalid_argument"},
		{"no destination", files.MoveFileToolID, `{"sourcePath":"readme.md"}`, "invalid_argument"},
		{"not a boolean", files.CopyFileToolID, `{"root":"docs","sourcePath":"readme.md","destinationPath":"y.md","overwrite":"yes"}`, "invalid_argument"},
		{"a directory as the source", files.MoveFileToolID, `{"root":"docs","sourcePath":"notes","destinationPath":"n2"}`, "not_a_file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code := files.CodeCopyFailed
			if tc.tool == files.MoveFileToolID {
				code = files.CodeMoveFailed
			}
			if e := h.Fail(tc.tool, tc.args); e.Code != code || reason(t, e) != tc.reason {
				t.Errorf("%s: %v %s, want %s (%s)", tc.args, e, e.Details, code, tc.reason)
			}
		})
	}
	if got := s.read(t, "owned.md"); !strings.HasPrefix(got, "<") {
		t.Errorf("a file was written outside the root: %q", got)
	}
	if got := s.read(t, "stolen.txt"); !strings.HasPrefix(got, "<") {
		t.Errorf("the secret was copied: %q", got)
	}
}

func TestDeleteFile(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	h := s.fullHarness(t)
	v, _ := h.Call(files.DeleteFileToolID, `{"root":"docs","path":"notes/a.txt"}`)
	var r struct {
		RelativePath string `json:"relativePath"`
		SizeBytes    int64  `json:"sizeBytes"`
		Deleted      bool   `json:"deleted"`
	}
	if err := wire.Unmarshal(v, &r); err != nil || !r.Deleted || r.RelativePath != "notes/a.txt" || r.SizeBytes != 5 {
		t.Errorf("delete = %s (%v)", v, err)
	}
	if _, err := os.Stat(filepath.Join(s.docs, "notes/a.txt")); !os.IsNotExist(err) {
		t.Errorf("the file is still there: %v", err)
	}
	for _, tc := range []struct{ args, reason string }{
		{`{"root":"docs","path":"notes"}`, "not_a_file"},
		{`{"root":"logs","path":"app.log"}`, "read_only"},
		{`{"root":"docs","path":"up"}`, "outside_root"},
		{`{"root":"docs","path":"../secret.txt"}`, "outside_root"},
		{`{"root":"docs"}`, "invalid_argument"},
	} {
		if e := h.Fail(files.DeleteFileToolID, tc.args); e.Code != files.CodeDeleteFailed || reason(t, e) != tc.reason {
			t.Errorf("%s: %v %s, want %s", tc.args, e, e.Details, tc.reason)
		}
	}
	if s.read(t, "secret.txt") != "the app's secret" || s.read(t, "logs/app.log") != "started\n" {
		t.Error("a file it must not delete is gone")
	}
	// The default guard does not run it: it is critical.
	if e := s.harness(t, s.options()).Fail(files.DeleteFileToolID, `{"root":"docs","path":"readme.md"}`); e.Code != wire.CodeExecutionDenied {
		t.Errorf("under the default guard: %v", e)
	}
}

// TestMoveOntoItselfThroughAnotherRoot: roots may nest (or reach one directory by two
// paths), so one file can have two names that differ in root and path. Copying or moving
// it onto itself is refused like a copy onto the same path; a move that replaced the
// file and then removed "the source" would lose it.
func TestMoveOntoItselfThroughAnotherRoot(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	opts := files.Options{Roots: []files.Root{{Alias: "docs", Path: s.docs}, {Alias: "notes", Path: filepath.Join(s.docs, "notes")}}}
	h := s.harness(t, opts)
	for _, tc := range []struct{ name, tool, args string }{
		{"move, nested root", files.MoveFileToolID, `{"root":"docs","sourcePath":"notes/a.txt","destinationRoot":"notes","destinationPath":"a.txt","overwrite":true}`},
		{"move, outer root", files.MoveFileToolID, `{"root":"notes","sourcePath":"a.txt","destinationRoot":"docs","destinationPath":"notes/a.txt","overwrite":true}`},
		{"copy", files.CopyFileToolID, `{"root":"docs","sourcePath":"notes/a.txt","destinationRoot":"notes","destinationPath":"a.txt","overwrite":true}`},
		{"move through a link", files.MoveFileToolID, `{"root":"docs","sourcePath":"alias.md","destinationPath":"readme.md","overwrite":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code := files.CodeCopyFailed
			if tc.tool == files.MoveFileToolID {
				code = files.CodeMoveFailed
			}
			if e := h.Fail(tc.tool, tc.args); e.Code != code || reason(t, e) != "same_path" {
				t.Errorf("%s: %v %s, want %s (same_path)", tc.args, e, e.Details, code)
			}
		})
	}
	if got := s.read(t, "docs/notes/a.txt"); got != "alpha" {
		t.Errorf("the file is now %q", got)
	}
	if got := s.read(t, "docs/readme.md"); got != "# Notes\n" {
		t.Errorf("the link's target is now %q", got)
	}
}
