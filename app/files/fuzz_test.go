package files_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app/files"
	"github.com/ansight-go/ansight/wire"
)

// FuzzFileTools sends arbitrary arguments to the file tools over the sandbox (the paths a
// host sends are the network input that matters here). Whatever the arguments, nothing
// outside the writable root changes, nothing outside the roots is read, no tool panics, and
// a failure is one of the tools' own.
func FuzzFileTools(f *testing.F) {
	tools := []string{files.ListDirectoryToolID, files.BeginBinaryDownloadToolID, files.PushFileToolID,
		files.ReadFileToolID, files.GetFileChecksumToolID, files.DownloadFileToolID, files.CopyFileToolID,
		files.MoveFileToolID, files.DeleteFileToolID}
	for i, args := range []string{
		`{}`,
		`{"root":"docs","path":"notes/../../secret.txt"}`,
		`{"directoryPath":"escape","fileName":"x","text":"x"}`,
		`{"path":"/etc/passwd"}`,
		`{"root":"logs","path":"up","recursive":true,"maxDepth":99,"maxEntries":-1}`,
		`{"directoryPath":"a/../../b","fileName":"..","contentBase64":"eA==","overwrite":true}`,
		`{"directoryPath":"docs","fileName":"up","text":"owned","overwrite":true,"root":"docs"}`,
		`{"path":"escape/docs/readme.md","chunkBytes":0}`,
		`{"root":"docs","path":"up","encoding":"utf8","maxBytes":"1048576"}`,
		`{"path":"../secret.txt","algorithms":"all"}`,
		`{"path":"escape/secret.txt","offsetBytes":"-1","expectedVersion":"x"}`,
		`{"root":"docs","sourcePath":"up","destinationPath":"copy.txt","overwrite":"1"}`,
		`{"root":"docs","sourcePath":"readme.md","destinationPath":"escape/owned.md"}`,
		`{"root":"logs","sourcePath":"app.log","destinationRoot":"docs","destinationPath":"../logs/app.log","overwrite":true}`,
		`{"root":"docs","path":"escape/logs/app.log"}`,
	} {
		f.Add(uint8(i), args)
	}
	f.Fuzz(func(t *testing.T, tool uint8, args string) {
		if v := jsontext.Value(args); !v.IsValid() || v.Kind() != '{' {
			t.Skip("not a JSON object: the envelope would not parse")
		}
		s := newSandbox(t)
		h := s.fullHarness(t)
		before := snapshotOutside(t, s)
		id := tools[int(tool)%len(tools)]
		r := h.Send(wire.TypeCall, fmt.Sprintf(`{"toolId":%q,"arguments":%s}`, id, args))
		if r.Err != nil {
			switch r.Err.Code {
			case wire.CodeExecutionException, wire.CodeResultSchemaInvalid, wire.CodeExecutionFailed:
				t.Fatalf("%s(%s): %v %s", id, args, r.Err, r.Err.Details)
			}
		}
		if after := snapshotOutside(t, s); !slices.Equal(before, after) {
			t.Fatalf("%s(%s) changed files outside the writable root:\n%v\n%v", id, args, before, after)
		}
		for _, data := range r.Artifacts {
			if string(data) == secret {
				t.Fatalf("%s(%s) served the secret outside the roots", id, args)
			}
		}
		if r.Result != nil && (bytes.Contains(r.Result.Result, []byte(secret)) || bytes.Contains(r.Result.Result, []byte(base64.StdEncoding.EncodeToString([]byte(secret))))) {
			t.Fatalf("%s(%s) read the secret outside the roots: %s", id, args, r.Result.Result)
		}
	})
}

// secret is the content of the file beside the roots.
const secret = "the app's secret"

// snapshotOutside lists every file outside the writable root (the secret beside the roots
// and the read-only root) with its content.
func snapshotOutside(t *testing.T, s *sandbox) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(s.dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == s.docs {
			return filepath.SkipDir
		}
		line := p
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += "=" + string(b)
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
