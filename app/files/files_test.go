package files_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/files"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var pinnedNow = time.Date(2026, 8, 25, 9, 30, 0, 0, time.UTC)

// sandbox is a temporary directory holding two roots and, beside them, a secret file that
// no tool may reach:
//
//	secret.txt                   outside every root
//	docs/                        root "docs" (writable)
//	  readme.md, .hidden, notes/a.txt, notes/deep/b.txt
//	  up -> ../secret.txt        symlink leaving the root
//	  alias.md -> readme.md      symlink inside the root
//	  escape -> ..               directory symlink leaving the root
//	logs/                        root "logs" (read-only)
//	  app.log, notes/a.txt       (a second notes/a.txt: ambiguous without a root)
type sandbox struct {
	dir, docs, logs string
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	dir := t.TempDir()
	s := &sandbox{dir: dir, docs: filepath.Join(dir, "docs"), logs: filepath.Join(dir, "logs")}
	write := func(rel, content string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, pinnedNow, pinnedNow); err != nil {
			t.Fatal(err)
		}
	}
	write("secret.txt", "the app's secret")
	write("docs/readme.md", "# Notes\n")
	write("docs/.hidden", "h")
	write("docs/notes/a.txt", "alpha")
	write("docs/notes/deep/b.txt", "beta")
	write("logs/app.log", "started\n")
	write("logs/notes/a.txt", "log alpha")
	for link, to := range map[string]string{"docs/up": "../secret.txt", "docs/alias.md": "readme.md", "docs/escape": ".."} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
	}
	for _, d := range []string{"docs", "docs/notes", "docs/notes/deep", "logs", "logs/notes"} {
		if err := os.Chtimes(filepath.Join(dir, d), pinnedNow, pinnedNow); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func (s *sandbox) options() files.Options {
	return files.Options{Roots: []files.Root{{Alias: "docs", Path: s.docs}, {Alias: "logs", Path: s.logs, ReadOnly: true}}}
}

func (s *sandbox) harness(t *testing.T, opts files.Options) *apptest.Harness {
	t.Helper()
	a := app.New(app.Options{Clock: func() time.Time { return pinnedNow }})
	if err := files.Register(a, opts); err != nil {
		t.Fatal(err)
	}
	return apptest.New(t, a)
}

// reason returns a tool failure's details.reason.
func reason(t *testing.T, e *wire.Error) string {
	t.Helper()
	var d struct {
		Reason string `json:"reason"`
	}
	if err := wire.Unmarshal(e.Details, &d); err != nil {
		t.Fatalf("details %s of %v: %v", e.Details, e, err)
	}
	return d.Reason
}

func TestRegister(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	h := s.harness(t, s.options())
	r := h.Send(wire.TypeQuery, `{"detail":"full"}`)
	// files.delete_file is critical: the default guard hides it.
	want := map[string]wire.Policy{files.ListDirectoryToolID: wire.PolicyRead, files.BeginBinaryDownloadToolID: wire.PolicyRead,
		files.PushFileToolID: wire.PolicyWrite, files.ReadFileToolID: wire.PolicyRead, files.GetFileChecksumToolID: wire.PolicyRead,
		files.DownloadFileToolID: wire.PolicyRead, files.CopyFileToolID: wire.PolicyWrite, files.MoveFileToolID: wire.PolicyWrite}
	if len(r.Catalog.Tools) != len(want) {
		t.Fatalf("%d tools, want %d", len(r.Catalog.Tools), len(want))
	}
	for _, e := range r.Catalog.Tools {
		if want[e.ID] != e.Policy || e.Category != "files" {
			t.Errorf("%s: policy %s, category %s", e.ID, e.Policy, e.Category)
		}
	}

	// With critical tools exposed, files.delete_file is there too.
	a := app.New(app.Options{Guard: catalog.GuardFullAccess})
	if err := files.Register(a, s.options()); err != nil {
		t.Fatal(err)
	}
	full := apptest.New(t, a).Send(wire.TypeQuery, `{"ids":["files.delete_file"]}`)
	if len(full.Catalog.Tools) != 1 || full.Catalog.Tools[0].Policy != wire.PolicyCritical {
		t.Errorf("files.delete_file under full access: %+v", full.Catalog.Tools)
	}

	// Read-only roots only: no writing tool.
	a = app.New(app.Options{Guard: catalog.GuardFullAccess})
	if err := files.Register(a, files.Options{Roots: []files.Root{{Alias: "logs", Path: s.logs, ReadOnly: true}}}); err != nil {
		t.Fatal(err)
	}
	if r := apptest.New(t, a).Send(wire.TypeQuery, `{}`); len(r.Catalog.Tools) != 5 {
		t.Errorf("read-only roots: %d tools", len(r.Catalog.Tools))
	}

	for name, opts := range map[string]files.Options{
		"no roots":       {},
		"bad alias":      {Roots: []files.Root{{Alias: "my docs", Path: s.docs}}},
		"same alias":     {Roots: []files.Root{{Alias: "docs", Path: s.docs}, {Alias: "DOCS", Path: s.logs}}},
		"missing dir":    {Roots: []files.Root{{Alias: "docs", Path: filepath.Join(s.dir, "nope")}}},
		"file, not dir":  {Roots: []files.Root{{Alias: "docs", Path: filepath.Join(s.dir, "secret.txt")}}},
		"alias with a /": {Roots: []files.Root{{Alias: "a/b", Path: s.docs}}},
	} {
		if err := files.Register(app.New(app.Options{}), opts); err == nil {
			t.Errorf("%s: Register succeeded", name)
		}
	}
}

// entries lists a directory and returns "relativePath kind" per entry.
func entries(t *testing.T, h *apptest.Harness, args string) (string, map[string]any) {
	t.Helper()
	res, _ := h.Call(files.ListDirectoryToolID, args)
	var out struct {
		Entries []struct {
			RelativePath string `json:"relativePath"`
			Kind         string `json:"kind"`
			RootAlias    string `json:"rootAlias"`
		} `json:"entries"`
	}
	var all map[string]any
	if err := wire.Unmarshal(res, &out); err != nil {
		t.Fatal(err)
	}
	_ = wire.Unmarshal(res, &all)
	var lines []string
	for _, e := range out.Entries {
		lines = append(lines, e.RelativePath+" "+e.Kind)
	}
	return strings.Join(lines, ", "), all
}

func TestListDirectory(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	h := s.harness(t, s.options())
	tests := []struct{ args, want string }{
		// Subdirectories first, then files; links as what they point to when inside the
		// root (alias.md), left out when they leave it (up, escape); hidden files on request.
		{`{}`, "notes directory, alias.md file, readme.md file"},
		{`{"includeHidden":true}`, "notes directory, .hidden file, alias.md file, readme.md file"},
		{`{"root":"docs","path":"notes"}`, "notes/deep directory, notes/a.txt file"},
		{`{"root":"docs","recursive":true}`, "notes directory, alias.md file, readme.md file, notes/deep directory, notes/a.txt file, notes/deep/b.txt file"},
		{`{"root":"docs","recursive":true,"maxDepth":2}`, "notes directory, alias.md file, readme.md file, notes/deep directory, notes/a.txt file"},
		{`{"root":"docs","recursive":true,"maxEntries":2}`, "notes directory, alias.md file"},
		{`{"root":"LOGS"}`, "notes directory, app.log file"},
		{`{"root":` + quote(s.logs) + `,"path":null}`, "notes directory, app.log file"},
		{`{"path":` + quote(filepath.Join(s.docs, "notes", "deep")) + `}`, "notes/deep/b.txt file"},
		{`{"root":"docs","path":"notes/../notes/deep/"}`, "notes/deep/b.txt file"},
		{`{"path":"notes/deep"}`, "notes/deep/b.txt file"}, // only docs has it
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			if got, _ := entries(t, apptest.New(t, h.App()), tt.args); got != tt.want {
				t.Errorf("list %s = %q, want %q", tt.args, got, tt.want)
			}
		})
	}
	_, res := entries(t, h, `{"root":"docs","maxEntries":0}`)
	if res["truncated"] != true || res["rootPath"] != s.docs || res["relativePath"] != "." || res["directoryPath"] != s.docs ||
		res["capturedAtUtc"] != "2026-08-25T09:30:00Z" || fmt.Sprint(res["availableRoots"]) != fmt.Sprintf("[map[alias:docs path:%s] map[alias:logs path:%s]]", s.docs, s.logs) {
		t.Errorf("listing = %v", res)
	}
	_, res = entries(t, h, `{"root":"docs","path":"notes"}`)
	e := res["entries"].([]any)[1].(map[string]any)
	if e["name"] != "a.txt" || e["path"] != filepath.Join(s.docs, "notes", "a.txt") || e["sizeBytes"] != 5.0 ||
		e["fileExtension"] != ".txt" || e["mimeType"] != "text/plain" || e["lastModifiedUtc"] != "2026-08-25T09:30:00Z" || e["isHidden"] != false {
		t.Errorf("file entry = %v", e)
	}
	if d := res["entries"].([]any)[0].(map[string]any); d["sizeBytes"] != nil || d["mimeType"] != nil || d["kind"] != "directory" {
		t.Errorf("directory entry = %v", d)
	}

	failures := []struct{ args, reason string }{
		{`{"path":".."}`, "outside_root"},
		{`{"path":"notes/../../logs"}`, "outside_root"},
		{`{"path":"/etc"}`, "outside_root"},
		{`{"path":` + quote(s.dir) + `}`, "outside_root"},
		{`{"root":"docs","path":"escape"}`, "outside_root"}, // a symlink to the parent
		{`{"root":"docs","path":"escape/logs"}`, "outside_root"},
		{`{"root":"nope"}`, "root_unknown"},
		{`{"path":"notes"}`, "ambiguous_path"}, // both roots have it
		{`{"root":"docs","path":"missing"}`, "not_found"},
		{`{"root":"docs","path":"readme.md"}`, "not_a_directory"},
		{`{"path":"` + strings.Repeat("a", 5000) + `"}`, "outside_root"},
	}
	for _, f := range failures {
		t.Run(f.args[:min(len(f.args), 80)], func(t *testing.T) {
			err := apptest.New(t, h.App()).Fail(files.ListDirectoryToolID, f.args)
			if err.Code != files.CodeListFailed || reason(t, err) != f.reason {
				t.Errorf("list %.80s: %v %s, want reason %s", f.args, err, err.Details, f.reason)
			}
			if strings.Contains(err.Message, s.dir) && f.reason != "outside_root" {
				t.Errorf("list %s: the message shows the app's absolute layout: %s", f.args, err.Message)
			}
		})
	}
}

func quote(s string) string { b, _ := wire.Marshal(s); return string(b) }

func TestBeginBinaryDownload(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	big := bytes.Repeat([]byte("0123456789"), 300) // 3000 bytes
	if err := os.WriteFile(filepath.Join(s.docs, "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	opts := s.options()
	opts.MaxDownloadBytes = 2999
	h := s.harness(t, s.options())

	res, r := h.Call(files.BeginBinaryDownloadToolID, `{"root":"docs","path":"notes/a.txt"}`)
	var out struct {
		TransferID   string `json:"transferId"`
		DownloadID   string `json:"downloadId"`
		SizeBytes    int64  `json:"sizeBytes"`
		FileName     string `json:"fileName"`
		MimeType     string `json:"mimeType"`
		Version      string `json:"version"`
		ChunkBytes   int    `json:"chunkBytes"`
		DeliveryMode string `json:"deliveryMode"`
		WireProtocol string `json:"wireProtocol"`
		Status       string `json:"status"`
		RelativePath string `json:"relativePath"`
		FilePath     string `json:"filePath"`
	}
	if err := wire.Unmarshal(res, &out); err != nil {
		t.Fatal(err)
	}
	// version: the size and .NET ticks of the modification time, as the official SDKs.
	wantVersion := fmt.Sprintf("5:%d", pinnedNow.UnixNano()/100+621355968000000000)
	if string(r.Artifacts[out.TransferID]) != "alpha" || out.SizeBytes != 5 || out.FileName != "a.txt" || out.MimeType != "text/plain" ||
		out.Version != wantVersion || out.ChunkBytes != 65536 || out.DeliveryMode != "websocket_binary" || out.DownloadID == "" ||
		out.WireProtocol != "ansight.file-transfer.v1" || out.Status != "queued" || out.RelativePath != "notes/a.txt" ||
		out.FilePath != filepath.Join(s.docs, "notes", "a.txt") {
		t.Errorf("download = %s, bytes %q", res, r.Artifacts[out.TransferID])
	}

	// The official host's own downloads: chunkBytes and downloadId as it sends them.
	res, r = h.Call(files.BeginBinaryDownloadToolID, `{"path":"big.bin","chunkBytes":1024,"downloadId":"tool.download.0123"}`)
	_ = wire.Unmarshal(res, &out)
	if !bytes.Equal(r.Artifacts[out.TransferID], big) || out.ChunkBytes != 1024 || out.DownloadID != "tool.download.0123" {
		t.Errorf("chunked download = %s", res)
	}
	// Through a symlink inside the root: served, under the link's name.
	res, r = h.Call(files.BeginBinaryDownloadToolID, `{"root":"docs","path":"alias.md"}`)
	_ = wire.Unmarshal(res, &out)
	if string(r.Artifacts[out.TransferID]) != "# Notes\n" || out.FileName != "alias.md" || out.MimeType != "text/markdown" {
		t.Errorf("download through a link = %s", res)
	}
	// Read-only roots are served.
	if _, r := h.Call(files.BeginBinaryDownloadToolID, `{"root":"logs","path":"app.log"}`); len(r.Artifacts) != 1 {
		t.Errorf("read-only root: %d artifacts", len(r.Artifacts))
	}

	failures := []struct{ args, reason string }{
		{`{"root":"docs","path":"up"}`, "outside_root"}, // the symlink to ../secret.txt
		{`{"root":"docs","path":"escape/secret.txt"}`, "outside_root"},
		{`{"root":"docs","path":"../secret.txt"}`, "outside_root"},
		{`{"path":` + quote(filepath.Join(s.dir, "secret.txt")) + `}`, "outside_root"},
		{`{"root":"docs","path":"notes"}`, "not_a_file"},
		{`{"root":"docs","path":"nope.txt"}`, "not_found"},
		{`{"path":"notes/a.txt"}`, "ambiguous_path"},
		{`{"root":"elsewhere","path":"a"}`, "root_unknown"},
	}
	for _, f := range failures {
		t.Run(f.args, func(t *testing.T) {
			r := apptest.New(t, h.App()).Send(wire.TypeCall, fmt.Sprintf(`{"toolId":%q,"arguments":%s}`, files.BeginBinaryDownloadToolID, f.args))
			if r.Err == nil || r.Err.Code != files.CodeDownloadFailed || reason(t, r.Err) != f.reason || len(r.Artifacts) != 0 {
				t.Errorf("download %s: %v, %d artifacts, want reason %s", f.args, r.Err, len(r.Artifacts), f.reason)
			}
		})
	}
	if err := h.Fail(files.BeginBinaryDownloadToolID, `{}`); err.Code != wire.CodeArgumentsSchemaInvalid {
		t.Errorf("no path: %v", err)
	}

	limited := s.harness(t, opts)
	if err := limited.Fail(files.BeginBinaryDownloadToolID, `{"path":"big.bin"}`); reason(t, err) != "too_large" {
		t.Errorf("over MaxDownloadBytes: %v", err)
	}
}

// push sends files.push_file the way the official host builds it (AppFilePush:
// directoryPath, fileName, contentBase64, overwrite, createDirectory, then root if given).
func push(dir, name string, content []byte, overwrite, create bool, root string) string {
	args := fmt.Sprintf(`{"directoryPath":%s,"fileName":%s,"contentBase64":%q,"overwrite":%v,"createDirectory":%v`,
		quote(dir), quote(name), base64.StdEncoding.EncodeToString(content), overwrite, create)
	if root != "" {
		args += `,"root":` + quote(root)
	}
	return args + "}"
}

func TestPushFile(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	opts := s.options()
	opts.MaxPushBytes = 100
	h := s.harness(t, opts)
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(s.docs, rel))
		if err != nil {
			return "(" + err.Error() + ")"
		}
		return string(b)
	}

	res, _ := h.Call(files.PushFileToolID, push("inbox/today", "hello.txt", []byte("hi"), false, true, ""))
	m := map[string]any{}
	_ = wire.Unmarshal(res, &m)
	if read("inbox/today/hello.txt") != "hi" || m["operation"] != "created" || m["overwritten"] != false || m["createdDirectory"] != true ||
		m["relativePath"] != "inbox/today/hello.txt" || m["rootAlias"] != "docs" || m["sizeBytes"] != 2.0 || m["mimeType"] != "text/plain" {
		t.Errorf("push = %v", m)
	}
	res, _ = h.Call(files.PushFileToolID, push("inbox/today", "hello.txt", []byte("hello again"), true, true, "docs"))
	m = map[string]any{}
	_ = wire.Unmarshal(res, &m)
	if read("inbox/today/hello.txt") != "hello again" || m["operation"] != "overwritten" || m["overwritten"] != true || m["createdDirectory"] != false {
		t.Errorf("overwrite = %v", m)
	}
	h.Call(files.PushFileToolID, `{"directoryPath":".","fileName":"plain.txt","text":"typed text","root":"docs"}`)
	if read("plain.txt") != "typed text" {
		t.Errorf("text push wrote %q", read("plain.txt"))
	}
	if left, _ := filepath.Glob(filepath.Join(s.docs, "inbox", "today", ".ansight-write-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}

	failures := []struct{ name, args, reason string }{
		{"exists", push("inbox/today", "hello.txt", []byte("x"), false, true, "docs"), "exists"},
		{"no directory, none created", push("new", "a.txt", []byte("x"), false, false, "docs"), "not_found"},
		{"read-only root", push(".", "a.txt", []byte("x"), false, true, "logs"), "read_only"},
		{"path as file name", push(".", "../a.txt", []byte("x"), false, true, "docs"), "invalid_file_name"},
		{"dot dot file name", push(".", "..", []byte("x"), false, true, "docs"), "invalid_file_name"},
		{"backslash file name", push(".", `a\b`, []byte("x"), false, true, "docs"), "invalid_file_name"},
		{"directory outside", push("../logs", "a.txt", []byte("x"), false, true, "docs"), "outside_root"},
		{"absolute directory outside", push(s.dir, "a.txt", []byte("x"), false, true, ""), "outside_root"},
		{"through a symlink leaving the root", push("escape", "a.txt", []byte("x"), false, true, "docs"), "outside_root"},
		{"over a symlink", push(".", "up", []byte("x"), true, true, "docs"), "not_a_file"},
		{"over a directory", push(".", "notes", []byte("x"), true, true, "docs"), "not_a_file"},
		{"into a file", push("readme.md", "a.txt", []byte("x"), false, true, "docs"), "not_a_directory"},
		{"too large", push(".", "big.bin", bytes.Repeat([]byte("x"), 101), false, true, "docs"), "too_large"},
		{"too large as text", `{"directoryPath":".","fileName":"t.txt","text":"` + strings.Repeat("y", 101) + `"}`, "too_large"},
		{"both contents", `{"directoryPath":".","fileName":"t.txt","text":"a","contentBase64":"YQ=="}`, "invalid_content"},
		{"no content", `{"directoryPath":".","fileName":"t.txt"}`, "invalid_content"},
		{"bad base64", `{"directoryPath":".","fileName":"t.txt","contentBase64":"***"}`, "invalid_content"},
	}
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			err := apptest.New(t, h.App()).Fail(files.PushFileToolID, f.args)
			if err.Code != files.CodePushFailed || reason(t, err) != f.reason {
				t.Errorf("%v %s, want reason %s", err, err.Details, f.reason)
			}
		})
	}
	// Nothing was written outside the roots, nor over the secret through the link.
	if b, _ := os.ReadFile(filepath.Join(s.dir, "secret.txt")); string(b) != "the app's secret" {
		t.Errorf("the secret was overwritten: %q", b)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "a.txt")); err == nil {
		t.Error("a file was written beside the roots")
	}
	if _, err := os.Stat(filepath.Join(s.logs, "a.txt")); err == nil {
		t.Error("a file was written into the read-only root")
	}
	if read("big.bin") != "(open "+filepath.Join(s.docs, "big.bin")+": no such file or directory)" {
		t.Errorf("an oversized push left %q", read("big.bin"))
	}
}

func TestToolErrorsAreNotExecutionFailures(t *testing.T) {
	t.Parallel()
	// A guard without write refuses the push before it runs, like any write tool.
	s := newSandbox(t)
	a := app.New(app.Options{Guard: catalog.GuardReadOnly})
	if err := files.Register(a, s.options()); err != nil {
		t.Fatal(err)
	}
	if err := apptest.New(t, a).Fail(files.PushFileToolID, push(".", "x.txt", []byte("x"), false, true, "")); err.Code != wire.CodeExecutionDenied {
		t.Errorf("read-only guard: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.docs, "x.txt")); err == nil {
		t.Error("the push ran")
	}
}
