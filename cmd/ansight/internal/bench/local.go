package bench

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/examples/notes"
	"github.com/ansight-go/ansight/host"
)

// localHost is a host started in this process on loopback ports, with pairing state in
// memory and artifacts under dir.
type localHost struct {
	srv *host.Server
	dir string
	tap *tap // captures the floor's bytes
}

func startLocalHost(ctx context.Context, dir string) (*localHost, error) {
	opts := host.Options{
		DiscoveryAddr: "127.0.0.1:0",
		ListenAddr:    "127.0.0.1:0",
		Logger:        slog.New(slog.DiscardHandler),
	}
	opts.Tools.ArtifactDir = filepath.Join(dir, "artifacts")
	t := &tap{}
	opts.WrapConn = t.wrap
	srv, err := host.New(opts)
	if err != nil {
		return nil, fmt.Errorf("bench: host: %w", err)
	}
	if err := srv.Start(ctx); err != nil {
		srv.Close()
		return nil, fmt.Errorf("bench: start host: %w", err)
	}
	return &localHost{srv: srv, dir: dir, tap: t}, nil
}

func (h *localHost) close() { h.srv.Close() }

// demoApp is a demo app connected to the local host over UDP enrollment and an
// authenticated loopback WebSocket, exactly as an app in another process would be.
type demoApp struct {
	app  *app.App
	conn *connect.Session
	directSession
}

// connectDemo starts a demo app with the given number of synthetic tools and waits until
// its session is open on the host. Each app gets its own app id, so its session is its own.
func (h *localHost) connectDemo(ctx context.Context, appID string, syntheticTools int) (*demoApp, error) {
	a := app.New(app.Options{}) // the default guard: read and write tools
	if err := notes.New(notes.Options{SyntheticTools: syntheticTools}).Register(a); err != nil {
		return nil, fmt.Errorf("bench: demo app: %w", err)
	}
	local := connect.Local{HostAddress: "127.0.0.1", DiscoveryPorts: []int{int(h.srv.DiscoveryAddr().Port())}}
	conn, err := connect.Dial(ctx, a, local, connect.Options{
		AppID: appID, AppName: "Ansight bench", AppVersion: "1.0", DeviceName: "bench",
		StateDir: filepath.Join(h.dir, "apps", appID),
	})
	if err != nil {
		return nil, fmt.Errorf("bench: connect the demo app: %w", err)
	}
	// Dial returns once the host acknowledged session.open; the registry holds the session
	// by then, the wait only guards against a reader that has not caught up.
	wait, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := h.srv.WaitSession(wait, func(s *host.Session) bool {
		info := s.Info()
		return info.AppID == appID && info.State == host.StateConnected && info.Opened
	})
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("bench: the demo app's session %s did not open on the host: %w", appID, err)
	}
	return &demoApp{app: a, conn: conn, directSession: directSession{client: s.Tools(), sessionID: s.ID()}}, nil
}

func (d *demoApp) close() { d.conn.Close() }
