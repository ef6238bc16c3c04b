package cli

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ansight-go/ansight/hostapi"
)

// blockingBackend answers Sessions only when the request ends, after saying it started.
type blockingBackend struct {
	hostapi.Backend
	entered chan chan struct{} // each request takes the channel it closes once started
}

func (b blockingBackend) Sessions(ctx context.Context) (*hostapi.Sessions, error) {
	close(<-b.entered)
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestInterrupted: a command interrupted while it waits for the host (Ctrl-C cancels its
// context) says "interrupted", not "context canceled", and exits 130.
func TestInterrupted(t *testing.T) {
	dir := t.TempDir()
	l, err := hostapi.Listen(filepath.Join(dir, hostapi.SocketName))
	if err != nil {
		t.Fatal(err)
	}
	b := blockingBackend{entered: make(chan chan struct{}, 1)}
	srv := &http.Server{Handler: hostapi.NewHandler(b)}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })

	for _, json := range []bool{false, true} {
		entered := make(chan struct{})
		b.entered <- entered
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-entered; cancel() }()
		var out, errw bytes.Buffer
		args := []string{"--state-dir", dir, "session", "list"}
		if json {
			args = append(args, "--json")
		}
		code := Main(ctx, Env{Args: args, Stdout: &out, Stderr: &errw})
		cancel()
		text := errw.String() + out.String()
		if code != ExitInterrupted || !strings.Contains(text, "interrupted") || strings.Contains(text, "context canceled") {
			t.Errorf("json %v: exit %d, output %q", json, code, text)
		}
	}
}
