//go:build unix

package files_test

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ansight-go/ansight/app/files"
)

// TestFIFONotOpened: a FIFO in a root is refused as not a regular file (or directory) by
// every tool that reads, at once: opening one to read waited for a writer for ever.
func TestFIFONotOpened(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	if err := syscall.Mkfifo(filepath.Join(s.docs, "pipe"), 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	h := s.harness(t, s.options())
	for _, tc := range []struct{ tool, args, reason string }{
		{files.ReadFileToolID, `{"root":"docs","path":"pipe"}`, "not_a_file"},
		{files.DownloadFileToolID, `{"root":"docs","path":"pipe"}`, "not_a_file"},
		{files.GetFileChecksumToolID, `{"root":"docs","path":"pipe"}`, "not_a_file"},
		{files.BeginBinaryDownloadToolID, `{"root":"docs","path":"pipe"}`, "not_a_file"},
		{files.CopyFileToolID, `{"root":"docs","sourcePath":"pipe","destinationPath":"copy"}`, "not_a_file"},
		{files.ListDirectoryToolID, `{"root":"docs","path":"pipe"}`, "not_a_directory"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			if e := h.Fail(tc.tool, tc.args); reason(t, e) != tc.reason {
				t.Errorf("%s %s: %v %s, want %s", tc.tool, tc.args, e, e.Details, tc.reason)
			}
		})
	}
}
