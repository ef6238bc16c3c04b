package control

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/ansight-go/ansight/hostapi"
)

// serve serves b's HTTP API over a real Unix socket (hostapi.Listen) and returns a client
// of it: the whole path a command's request takes.
func serve(t *testing.T, b hostapi.Backend) *hostapi.Client {
	t.Helper()
	dir, err := os.MkdirTemp("", "ctl") // short: Unix socket paths are limited to ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "state", hostapi.SocketName)
	l, err := hostapi.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: hostapi.NewHandler(b)}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return hostapi.NewClient(path)
}
