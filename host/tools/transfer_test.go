package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ansight-go/ansight/wire"
)

const (
	id1 = "0123456789abcdef0123456789abcdef"
	id2 = "fedcba9876543210fedcba9876543210"
	id3 = "00000000000000000000000000000003"
)

func desc(id, name string, size int) string {
	return fmt.Sprintf(`{"deliveryMode":"websocket_binary","wireProtocol":"ansight.file-transfer.v1","transferId":%q,`+
		`"sizeBytes":%d,"fileName":%q,"mimeType":"image/png","status":"queued","width":10}`, id, size, name)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{1})
	r.Read(b)
	return b
}

// transferApp answers every call with result (JSON text) followed by frames.
func transferApp(t *testing.T, result string, frames ...msg) *fakeApp {
	app := newFakeApp(t, readTool)
	app.onCall = func(req *wire.Envelope, c wire.Call) []msg {
		return append([]msg{reply(t, req, wire.TypeResult, `{"toolId":"t.read","success":true,"result":`+result+`}`)}, frames...)
	}
	return app
}

func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

type progressLog struct {
	mu sync.Mutex
	ps []TransferProgress
}

func (l *progressLog) add(p TransferProgress) {
	l.mu.Lock()
	l.ps = append(l.ps, p)
	l.mu.Unlock()
}

func TestTransferHappyPath(t *testing.T) {
	t.Parallel()
	data := randomBytes(200_000)
	app := transferApp(t, desc(id1, "screenshot.png", len(data)), chunks(id1, data, 64<<10)...)
	var log progressLog
	dir := t.TempDir()
	hs := newHarness(t, Options{ArtifactDir: dir, OnTransfer: log.add}, app.handler())
	res, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Artifacts) != 1 {
		t.Fatalf("artifacts %+v", res.Artifacts)
	}
	a := res.Artifacts[0]
	if a.Err != nil || a.TransferID != id1 || a.SizeBytes != int64(len(data)) || a.MimeType != "image/png" ||
		a.FileName != "screenshot.png" || a.Path != filepath.Join(dir, "screenshot.png") {
		t.Fatalf("artifact %+v", a)
	}
	got, err := os.ReadFile(a.Path)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("file content differs (%d bytes, %v)", len(got), err)
	}
	if fi, _ := os.Stat(a.Path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	wantResult := fmt.Sprintf(`{"deliveryMode":"websocket_binary","wireProtocol":"ansight.file-transfer.v1","transferId":%q,`+
		`"sizeBytes":%d,"fileName":"screenshot.png","mimeType":"image/png","width":10,"status":"complete","artifactPath":%q,"receivedBytes":%d}`,
		id1, len(data), a.Path, len(data))
	if string(res.Payload.Result) != wantResult {
		t.Errorf("descriptor\n got %s\nwant %s", res.Payload.Result, wantResult)
	}
	var d wire.TransferDescriptor
	if err := wire.Unmarshal(res.Payload.Result, &d); err != nil || d.Status != StatusComplete || d.ArtifactPath != a.Path {
		t.Errorf("descriptor %+v (%v)", d, err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.ps) != 6 || log.ps[0].Status != StatusReceiving || log.ps[0].ReceivedBytes != 0 ||
		log.ps[5].Status != StatusComplete || log.ps[5].ReceivedBytes != int64(len(data)) {
		t.Errorf("progress %+v", log.ps)
	}
	if s := hs.c.Stats(); s.TransfersCompleted != 1 || s.TransfersFailed != 0 || s.RejectedFrames != 0 {
		t.Errorf("stats %+v", s)
	}
}

func TestTransferSeveralInOneResponse(t *testing.T) {
	t.Parallel()
	d1, d2, d3 := randomBytes(70_000), randomBytes(10), []byte{}
	app := newFakeApp(t, readTool)
	app.onBatch = func(req *wire.Envelope, b wire.Batch) []msg {
		payload := `{"success":true,"completed":2,"requested":2,"stoppedEarly":false,"results":[` +
			`{"toolId":"t.read","success":true,"result":` + desc(id1, "a.bin", len(d1)) + `,"index":0,` +
			`"evidence":{"screenshot":{"toolId":"ui.get_screenshot","success":true,"result":` + desc(id3, "shot.png", 0) + `}}},` +
			`{"toolId":"t.read","success":true,"result":{"nested":[` + desc(id2, "a.bin", len(d2)) + `]},"index":1}]}`
		f1, f2, f3 := chunks(id1, d1, 32<<10), chunks(id2, d2, 4), chunks(id3, d3, 4)
		out := []msg{reply(t, req, wire.TypeBatchResult, payload)}
		// Interleaved: transfers are keyed by id, not by order.
		for i := 0; i < max(len(f1), len(f2), len(f3)); i++ {
			for _, f := range [][]msg{f1, f2, f3} {
				if i < len(f) {
					out = append(out, f[i])
				}
			}
		}
		return out
	}
	dir := t.TempDir()
	hs := newHarness(t, Options{ArtifactDir: dir}, app.handler())
	res, err := hs.c.Batch(t.Context(), false, []wire.Call{{ToolID: "t.read"}, {ToolID: "t.read"}})
	if err != nil {
		t.Fatal(err)
	}
	var gotIDs []string
	for _, a := range res.Artifacts {
		if a.Err != nil {
			t.Errorf("%s: %v", a.TransferID, a.Err)
		}
		gotIDs = append(gotIDs, a.TransferID)
	}
	if !slices.Equal(gotIDs, []string{id1, id3, id2}) {
		t.Errorf("artifact order %v", gotIDs)
	}
	if res.Artifacts[0].Path == res.Artifacts[2].Path || filepath.Base(res.Artifacts[2].Path) != "a-1.bin" {
		t.Errorf("same file name: %s %s", res.Artifacts[0].Path, res.Artifacts[2].Path)
	}
	for i, want := range [][]byte{d1, d3, d2} {
		if got, _ := os.ReadFile(res.Artifacts[i].Path); !bytes.Equal(got, want) {
			t.Errorf("artifact %d content differs", i)
		}
	}
	if n := strings.Count(string(res.Raw), `"status":"complete"`); n != 3 {
		t.Errorf("%d descriptors rewritten: %s", n, res.Raw)
	}
	if ev := res.Payload.Results[0].Evidence["screenshot"]; !strings.Contains(string(ev.Result), `"status":"complete"`) {
		t.Errorf("evidence descriptor %s", ev.Result)
	}
}

func TestTransferFailures(t *testing.T) {
	t.Parallel()
	ten := []byte("0123456789")
	cases := []struct {
		name   string
		size   int
		frames []msg
		want   string
	}{
		{"gap", 30, []msg{frame(frameChunk, id1, 0, 0, ten), frame(frameChunk, id1, 1, 20, ten)}, "gap or overlap"},
		{"overlap", 30, []msg{frame(frameChunk, id1, 0, 0, ten), frame(frameChunk, id1, 1, 5, ten)}, "gap or overlap"},
		{"sequence", 30, []msg{frame(frameChunk, id1, 0, 0, ten), frame(frameChunk, id1, 2, 10, ten)}, "sequence 2, want 1"},
		{"first sequence", 30, []msg{frame(frameChunk, id1, 1, 0, ten)}, "sequence 1, want 0"},
		{"short", 30, []msg{frame(frameChunk, id1, 0, 0, ten), frame(frameComplete, id1, 1, 10, nil)}, "received 10 of the announced 30"},
		{"long", 15, []msg{frame(frameChunk, id1, 0, 0, ten), frame(frameChunk, id1, 1, 10, ten)}, "more than the announced 15"},
		{"complete offset", 10, []msg{frame(frameChunk, id1, 0, 0, ten), frame(frameComplete, id1, 1, 0, nil)}, "gap or overlap"},
		{"error frame", 30, []msg{frame(frameChunk, id1, 0, 0, ten), frame(frameError, id1, 1, 10, []byte("disk\x00 full"))}, "aborted the transfer: disk? full"},
		{"complete with payload", 10, []msg{frame(frameChunk, id1, 0, 0, ten), frame(frameComplete, id1, 1, 10, ten)}, "ASFT frame"},
		{"bad header", 10, []msg{frame(frameChunk, id1, 0, 0, ten), func() msg { m := frame(frameChunk, id1, 1, 10, nil); m.data[4] = 9; return m }()}, "ASFT frame"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			app := transferApp(t, desc(id1, "f.bin", tc.size), tc.frames...)
			dir := t.TempDir()
			hs := newHarness(t, Options{ArtifactDir: dir}, app.handler())
			res, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read"})
			if err != nil {
				t.Fatal(err)
			}
			a := res.Artifacts[0]
			if a.Err == nil || !strings.Contains(a.Err.Error(), tc.want) || a.Path != "" {
				t.Fatalf("artifact %+v, want error %q", a, tc.want)
			}
			if !strings.Contains(string(res.Payload.Result), `"status":"failed"`) || strings.Contains(string(res.Payload.Result), "artifactPath") {
				t.Errorf("descriptor %s", res.Payload.Result)
			}
			if names := dirEntries(t, dir); len(names) != 0 {
				t.Errorf("partial files left: %v", names)
			}
			if s := hs.c.Stats(); s.TransfersFailed != 1 {
				t.Errorf("stats %+v", s)
			}
		})
	}
}

func TestTransferUnknownIDRejected(t *testing.T) {
	t.Parallel()
	data := []byte("hello")
	frames := append([]msg{frame(frameChunk, id2, 0, 0, data), {2, []byte("ASFT-short")}}, chunks(id1, data, 64)...)
	app := transferApp(t, desc(id1, "f.txt", len(data)), frames...)
	hs := newHarness(t, Options{}, app.handler())
	res, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Artifacts[0].Err != nil {
		t.Fatal(res.Artifacts[0].Err)
	}
	if s := hs.c.Stats(); s.RejectedFrames != 2 {
		t.Errorf("stats %+v, want 2 rejected frames", s)
	}
}

func TestTransferConnectionDrop(t *testing.T) {
	t.Parallel()
	app := transferApp(t, desc(id1, "f.bin", 100), frame(frameChunk, id1, 0, 0, []byte("partial")), msg{typ: dropConnection})
	dir := t.TempDir()
	hs := newHarness(t, Options{ArtifactDir: dir}, app.handler())
	res, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read"})
	if err != nil {
		t.Fatal(err) // the JSON answer arrived: the call has its answer
	}
	a := res.Artifacts[0]
	if !errors.Is(a.Err, ErrSessionClosed) || a.SizeBytes != 7 {
		t.Fatalf("artifact %+v", a)
	}
	if names := dirEntries(t, dir); len(names) != 0 {
		t.Errorf("partial file left: %v", names)
	}
	if !strings.Contains(string(res.Payload.Result), `"receivedBytes":7`) {
		t.Errorf("descriptor %s", res.Payload.Result)
	}
}

func TestTransferStalls(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		app := transferApp(t, desc(id1, "f.bin", 100), frame(frameChunk, id1, 0, 0, []byte("partial")))
		dir := t.TempDir()
		hs := newHarness(t, Options{ArtifactDir: dir, Timeout: 3 * time.Second}, app.handler())
		if _, err := hs.c.Catalog(t.Context()); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		res, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read"})
		if err != nil {
			t.Fatal(err)
		}
		if a := res.Artifacts[0]; !errors.Is(a.Err, ErrTimeout) {
			t.Fatalf("artifact %+v", a)
		}
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("stall detected after %v", d)
		}
		if names := dirEntries(t, dir); len(names) != 0 {
			t.Errorf("partial file left: %v", names)
		}
	})
}

// TestTransferSlowButSteadyIsNotAStall: a transfer whose frames come within the stall
// window succeeds though the whole takes longer than the window, within the time its size
// allows (MinTransferRate).
func TestTransferSlowButSteadyIsNotAStall(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		data := randomBytes(4 * MinTransferRate) // 4 s at the floor rate, plus the 3 s of Timeout
		app := transferApp(t, desc(id1, "f.bin", len(data)))
		hs := newHarness(t, Options{Timeout: 3 * time.Second}, app.handler())
		if _, err := hs.c.Catalog(t.Context()); err != nil {
			t.Fatal(err)
		}
		go func() {
			synctest.Wait() // the result has been handled
			for _, f := range chunks(id1, data, MinTransferRate) {
				time.Sleep(time.Second) // each frame within the timeout, the whole (5 s) beyond
				hs.send(f)
			}
		}()
		res, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read"})
		if err != nil {
			t.Fatal(err)
		}
		if a := res.Artifacts[0]; a.Err != nil {
			t.Fatalf("artifact %+v", a)
		}
	})
}

func TestTransferContextCancel(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		app := transferApp(t, desc(id1, "f.bin", 100), frame(frameChunk, id1, 0, 0, []byte("partial")))
		dir := t.TempDir()
		hs := newHarness(t, Options{ArtifactDir: dir}, app.handler())
		if _, err := hs.c.Catalog(t.Context()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			synctest.Wait()
			cancel()
		}()
		res, err := hs.c.Call(ctx, wire.Call{ToolID: "t.read"})
		if err != nil {
			t.Fatal(err)
		}
		if a := res.Artifacts[0]; !errors.Is(a.Err, context.Canceled) {
			t.Fatalf("artifact %+v", a)
		}
		if names := dirEntries(t, dir); len(names) != 0 {
			t.Errorf("partial file left: %v", names)
		}
	})
}

func TestTransferLimits(t *testing.T) {
	t.Parallel()
	result := `[` + desc(id1, "big.bin", 1000) + `,` + desc(id2, "ok.bin", 3) + `,` + desc(id3, "third.bin", 3) + `]`
	frames := append(chunks(id1, randomBytes(1000), 512), chunks(id2, []byte("abc"), 3)...)
	frames = append(frames, chunks(id3, []byte("abc"), 3)...)
	app := transferApp(t, result, frames...)
	hs := newHarness(t, Options{MaxArtifactBytes: 999, MaxTransfers: 1}, app.handler())
	res, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read"})
	if err != nil {
		t.Fatal(err)
	}
	a := res.Artifacts
	if a[0].Err == nil || !strings.Contains(a[0].Err.Error(), "exceeds the limit") {
		t.Errorf("oversized: %+v", a[0])
	}
	if a[1].Err != nil {
		t.Errorf("second: %+v", a[1])
	}
	if a[2].Err == nil || !strings.Contains(a[2].Err.Error(), "too many concurrent transfers") {
		t.Errorf("third: %+v", a[2])
	}
	if s := hs.c.Stats(); s.RejectedFrames != 0 {
		t.Errorf("frames of refused transfers are dropped quietly: %+v", s)
	}
}

func TestTransferBadDescriptors(t *testing.T) {
	t.Parallel()
	result := `[` + strings.Replace(desc("XYZ", "a", 3), `"sizeBytes":3`, `"sizeBytes":3`, 1) + `,` +
		strings.Replace(desc(id1, "b", 3), `"sizeBytes":3`, `"sizeBytes":-3`, 1) + `,` +
		strings.Replace(desc(id2, "c", 3), `"sizeBytes":3`, `"sizeBytes":"3"`, 1) + `,` +
		desc(id3, "d", 3) + `,` + desc(id3, "d-again", 3) + `]`
	app := transferApp(t, result, chunks(id3, []byte("abc"), 2)...)
	hs := newHarness(t, Options{}, app.handler())
	res, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Artifacts) != 4 {
		t.Fatalf("artifacts %+v", res.Artifacts)
	}
	for i, want := range []string{"not 32 lower-case hex", "non-negative", "not a number", ""} {
		a := res.Artifacts[i]
		if want == "" && a.Err != nil || want != "" && (a.Err == nil || !strings.Contains(a.Err.Error(), want)) {
			t.Errorf("artifact %d: %+v, want %q", i, a, want)
		}
	}
	// Both descriptors of the same transfer report its outcome.
	if n := strings.Count(string(res.Raw), `"status":"complete"`); n != 2 {
		t.Errorf("%s", res.Raw)
	}
}

func TestTransferDefaultDirectory(t *testing.T) {
	t.Parallel()
	app := transferApp(t, desc(id1, "x.txt", 2), chunks(id1, []byte("hi"), 2)...)
	hs := newHarness(t, Options{}, app.handler())
	hs.c.opts.ArtifactDir = "" // the harness sets one; test the default
	hs.c.transfers.opts = &hs.c.opts
	res, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read"})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Artifacts[0].Path
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(p)) })
	if !strings.HasPrefix(filepath.Base(filepath.Dir(p)), "ansight-artifacts-") {
		t.Errorf("path %s", p)
	}
}

func TestSanitizeFileName(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"screenshot.png":                   "screenshot.png",
		"../../etc/passwd":                 "passwd",
		`..\..\windows\evil.exe`:           "evil.exe",
		"..":                               "artifact-" + id1,
		".hidden":                          "hidden",
		"":                                 "artifact-" + id1,
		"a b:c*d?.txt":                     "a_b_c_d_.txt",
		"снимок.png":                       "снимок.png",
		"nul.txt":                          "_nul.txt",
		"COM1":                             "_COM1",
		"trailing..":                       "trailing",
		"bidi\u202egnp.exe":                "bidi_gnp.exe",
		strings.Repeat("é", 100) + ".jpeg": strings.Repeat("é", 57) + ".jpeg",
	}
	for in, want := range cases {
		if got := sanitizeFileName(in, id1); got != want {
			t.Errorf("sanitizeFileName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWithProgressPerCall: two calls running at once each see the progress of their own
// transfers only; Options.OnTransfer still sees both.
func TestWithProgressPerCall(t *testing.T) {
	t.Parallel()
	data := map[string][]byte{id1: randomBytes(150_000), id2: randomBytes(90_000)}
	app := newFakeApp(t, readTool)
	app.onCall = func(req *wire.Envelope, c wire.Call) []msg {
		id := id1
		if c.CallID == "b" {
			id = id2
		}
		return append([]msg{reply(t, req, wire.TypeResult, `{"toolId":"t.read","success":true,"result":`+desc(id, c.CallID+".bin", len(data[id]))+`}`)},
			chunks(id, data[id], 16<<10)...)
	}
	var all progressLog
	hs := newHarness(t, Options{ArtifactDir: t.TempDir(), OnTransfer: all.add}, app.handler())
	logs := map[string]*progressLog{"a": {}, "b": {}}
	var wg sync.WaitGroup
	for callID, log := range logs {
		wg.Go(func() {
			if _, err := hs.c.Call(WithProgress(t.Context(), log.add), wire.Call{ToolID: "t.read", CallID: callID}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for callID, want := range map[string]string{"a": id1, "b": id2} {
		log := logs[callID]
		if len(log.ps) < 2 || log.ps[len(log.ps)-1].Status != StatusComplete {
			t.Errorf("call %s: progress %+v", callID, log.ps)
		}
		for _, p := range log.ps {
			if p.TransferID != want {
				t.Errorf("call %s saw transfer %s", callID, p.TransferID)
			}
		}
	}
	all.mu.Lock()
	defer all.mu.Unlock()
	if n := len(logs["a"].ps) + len(logs["b"].ps); len(all.ps) != n {
		t.Errorf("OnTransfer saw %d reports, the calls %d", len(all.ps), n)
	}
}
