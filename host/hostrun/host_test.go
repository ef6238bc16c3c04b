package hostrun

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/player"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// shortDir is a state directory whose socket path fits a Unix socket's ~100 bytes.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "hostrun")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

var loopback = host.Options{DiscoveryAddr: "127.0.0.1:0", ListenAddr: "127.0.0.1:0"}

// A complete host: its control socket answers with the player and the recordings in its
// status, a client's shutdown request closes Done, and Close removes the socket.
func TestCompleteHost(t *testing.T) { // not parallel: hostapi.Listen sets the process umask for a moment
	dir := shortDir(t)
	web, err := player.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, err := Start(t.Context(), Options{StateDir: dir, Host: loopback, Version: "test", Record: true, Player: web, Control: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if h.SocketPath() != filepath.Join(dir, hostapi.SocketName) || h.Recorder() == nil || h.PlayerURL() == "" || h.Member() != nil {
		t.Errorf("socket %q, recorder %v, player %q, member %v", h.SocketPath(), h.Recorder(), h.PlayerURL(), h.Member())
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c := hostapi.NewClient(h.SocketPath())
	st, err := c.Status(ctx)
	if err != nil || st.Version != "test" || st.Player != "http://"+web.Addr().String()+"/" || st.Recording == nil || st.StateDir != dir {
		t.Fatalf("Status = %+v, %v", st, err)
	}
	a, err := c.Player(ctx, true)
	if err != nil || !a.Renewed || a.URL != h.PlayerURL() {
		t.Errorf("renewed player access %+v (%v), the host's URL %s", a, err, h.PlayerURL())
	}
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Done():
	case <-ctx.Done():
		t.Fatal("Done was not closed by the shutdown request")
	}
	h.Close()
	h.Close() // twice is harmless
	if _, err := os.Stat(h.SocketPath()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket is left after Close: %v", err)
	}
}

// A start that fails closes the player's listener it was given.
func TestStartFailureClosesListener(t *testing.T) {
	t.Parallel()
	web, err := player.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	taken, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	_, err = Start(t.Context(), Options{StateDir: t.TempDir(), Host: host.Options{DiscoveryAddr: taken.LocalAddr().String(), ListenAddr: "127.0.0.1:0"}, Player: web})
	if err == nil {
		t.Fatal("a host started on a taken enrollment address")
	}
	if _, err := web.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("the player's listener is open after the failed start: %v", err)
	}
	if _, err := Start(t.Context(), Options{}); err == nil {
		t.Error("a host started without a state directory")
	}
}
