package hostile

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/internal/cli"
)

// The command tree under attack: a test host's control API is served on a socket in a
// state directory, as `ansight host run` serves it, and the real commands (cli.Main) print
// what the malicious apps connected to that host sent.

// serveControl serves h's control API in a new state directory and returns the directory.
func serveControl(t *testing.T, h *testHost) string {
	t.Helper()
	return serveControlWith(t, h, hostapi.LocalOptions{})
}

// serveControlWith is serveControl with the control API's options (a recorder).
func serveControlWith(t *testing.T, h *testHost, opts hostapi.LocalOptions) string {
	t.Helper()
	dir := t.TempDir()
	l, err := hostapi.Listen(filepath.Join(dir, hostapi.SocketName))
	if err != nil {
		t.Fatal(err)
	}
	opts.StateDir = dir
	srv := &http.Server{Handler: hostapi.NewHandler(hostapi.NewLocal(h.Server, opts))}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("control API: %v", err)
		}
	}()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return dir
}

// cliRun is the outcome of one command.
type cliRun struct {
	stdout, stderr string
	code           int
}

// runCLI runs one command against the host whose state directory is dir.
func runCLI(t *testing.T, dir string, args ...string) cliRun {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	code := cli.Main(ctx, cli.Env{Args: append([]string{"--state-dir", dir}, args...), Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut})
	return cliRun{stdout: out.String(), stderr: errOut.String(), code: code}
}
