package files_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/app/files"
	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/wire"
)

// End to end: a Go app with the file and artifact tools, connected in local mode to our
// host over real loopback sockets (UDP enrollment, WebSocket session). The host lists,
// pushes, downloads and requests an artifact; the bytes it writes are the app's bytes.
func TestEndToEndThroughOurHost(t *testing.T) {
	t.Parallel()
	const appID = "com.example.files"
	s := newSandbox(t)
	artifactDir := t.TempDir()
	srv, err := host.New(host.Options{DiscoveryAddr: "127.0.0.1:0", ListenAddr: "127.0.0.1:0", StateDir: t.TempDir(),
		Tools: tools.Options{ArtifactDir: artifactDir}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	a := app.New(app.Options{})
	if err := files.Register(a, s.options()); err != nil {
		t.Fatal(err)
	}
	if err := files.RegisterArtifacts(a, exportProvider(new(atomic.Int32))); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- connect.Run(ctx, a, connect.Local{HostAddress: "127.0.0.1", DiscoveryPorts: []int{int(srv.DiscoveryAddr().Port())}},
			connect.Options{AppID: appID, StateDir: t.TempDir()})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("connect.Run = %v", err)
		}
	}()
	sess := awaitSession(t, srv, appID)
	call := func(toolID, args string) *tools.CallResult {
		t.Helper()
		res, err := sess.Tools().Call(ctx, wire.Call{ToolID: toolID, Arguments: jsontext.Value(args)})
		if err != nil {
			t.Fatalf("%s(%s): %v", toolID, args, err)
		}
		return res
	}
	received := func(res *tools.CallResult) []byte {
		t.Helper()
		if len(res.Artifacts) != 1 || res.Artifacts[0].Err != nil {
			t.Fatalf("artifacts = %+v", res.Artifacts)
		}
		b, err := os.ReadFile(res.Artifacts[0].Path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	// Push 200 KiB (four ASFT frames back), then download it with 64 KiB frames.
	content := bytes.Repeat([]byte("ansight "), 25600)
	call(files.PushFileToolID, push("inbox", "payload.bin", content, false, true, "docs"))
	if got, _ := os.ReadFile(filepath.Join(s.docs, "inbox", "payload.bin")); !bytes.Equal(got, content) {
		t.Fatalf("the app wrote %d bytes, want %d", len(got), len(content))
	}
	res := call(files.BeginBinaryDownloadToolID, `{"root":"docs","path":"inbox/payload.bin"}`)
	if got := received(res); !bytes.Equal(got, content) {
		t.Errorf("the host received %d bytes, want %d", len(got), len(content))
	}
	// Our host rewrites the descriptor: complete, with the received file's path.
	var desc struct {
		Status        string `json:"status"`
		ArtifactPath  string `json:"artifactPath"`
		ReceivedBytes int64  `json:"receivedBytes"`
	}
	if err := wire.Unmarshal(res.Payload.Result, &desc); err != nil || desc.Status != "complete" ||
		desc.ReceivedBytes != int64(len(content)) || desc.ArtifactPath != res.Artifacts[0].Path {
		t.Errorf("descriptor after the transfer = %+v (%v)", desc, err)
	}

	listing := call(files.ListDirectoryToolID, `{"root":"docs","path":"inbox"}`)
	if !bytes.Contains(listing.Payload.Result, []byte(`"relativePath":"inbox/payload.bin"`)) {
		t.Errorf("listing = %s", listing.Payload.Result)
	}

	res = call(files.RequestArtifactToolID, `{"providerId":"notes.export","artifactId":"all-notes","arguments":{"n":1}}`)
	if got := string(received(res)); got != fmt.Sprintf(`{"arguments":{"n":1},"request":%q}`, requestOf(t, res)) {
		t.Errorf("artifact = %s", got)
	}

	// A path that leaves the root is refused across the wire too.
	_, err = sess.Tools().Call(ctx, wire.Call{ToolID: files.BeginBinaryDownloadToolID, Arguments: jsontext.Value(`{"root":"docs","path":"up"}`)})
	if wire.CodeOf(err) != files.CodeDownloadFailed {
		t.Errorf("download through an escaping link: %v", err)
	}
}

// requestOf returns the request id an artifacts.request result carries as its downloadId.
func requestOf(t *testing.T, res *tools.CallResult) string {
	t.Helper()
	var r struct {
		DownloadID string `json:"downloadId"`
	}
	if err := wire.Unmarshal(res.Payload.Result, &r); err != nil {
		t.Fatal(err)
	}
	return r.DownloadID
}

// awaitSession waits for the host's open session of appID.
func awaitSession(t *testing.T, srv *host.Server, appID string) *host.Session {
	t.Helper()
	s, err := srv.WaitSession(t.Context(), func(s *host.Session) bool {
		info := s.Info()
		return info.AppID == appID && info.Opened && info.State == host.StateConnected
	})
	if err != nil {
		t.Fatalf("no open session on the host: %v", err)
	}
	return s
}
