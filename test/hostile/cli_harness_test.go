package hostile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ansight-go/ansight/host/control"
	"github.com/ansight-go/ansight/hostapi"
)

// The command tree under attack: a test host's control API is served on a socket in a
// state directory, as `ansight host run` serves it, and the real commands (the ansight
// executable, built once for the test run) print what the malicious apps connected to that
// host sent.

// serveControl serves h's control API in a new state directory and returns the directory.
func serveControl(t *testing.T, h *testHost) string {
	t.Helper()
	return serveControlWith(t, h, control.Options{})
}

// serveControlWith is serveControl with the control API's options (a recorder).
func serveControlWith(t *testing.T, h *testHost, opts control.Options) string {
	t.Helper()
	dir := t.TempDir()
	l, err := hostapi.Listen(filepath.Join(dir, hostapi.SocketName))
	if err != nil {
		t.Fatal(err)
	}
	opts.StateDir = dir
	srv := &http.Server{Handler: hostapi.NewHandler(control.New(h.Server, opts))}
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

// cliDir holds the ansight executable once built; TestMain removes it.
var cliDir string

// buildCLI builds the ansight executable (cmd/ansight) once for the test run. The command
// tree is internal to cmd/ansight, so this suite runs it as its users do: as a program.
var buildCLI = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "hostile-cli-")
	if err != nil {
		return "", err
	}
	cliDir = dir
	bin := filepath.Join(dir, "ansight")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/ansight-go/ansight/cmd/ansight").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./cmd/ansight: %v\n%s", err, out)
	}
	return bin, nil
})

// runCLI runs one command against the host whose state directory is dir.
func runCLI(t *testing.T, dir string, args ...string) cliRun {
	t.Helper()
	bin, err := buildCLI()
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--state-dir", dir}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), &out, &errOut
	code := 0
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("ansight %s: %v", strings.Join(args, " "), err)
		}
		code = exit.ExitCode()
	}
	return cliRun{stdout: out.String(), stderr: errOut.String(), code: code}
}
