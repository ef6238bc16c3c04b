package cli

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/ansight-go/ansight/hostapi"
)

// cmdFollow runs a --follow command until it has printed LINES lines, with a trigger in
// between: follow LINES args... -- trigger args... starts the command, waits for its
// first LINES-1 lines, runs the trigger (a command of the tree, which must succeed), waits
// for the last line, then interrupts it as Ctrl-C does, which must end it with exit 0 and
// nothing more on stdout (--json: one record a line, nothing else). Its output becomes
// stdout. Waits are bounded (45 s each) but never timed: no figure depends on speed.
func cmdFollow(ts *testscript.TestScript, neg bool, args []string) {
	sep := -1
	for i, a := range args {
		if a == "--" {
			sep = i
		}
	}
	if neg || len(args) < 2 || sep < 2 || sep == len(args)-1 {
		ts.Fatalf("usage: follow LINES args... -- trigger args...")
	}
	lines, err := strconv.Atoi(args[0])
	if err != nil || lines < 1 {
		ts.Fatalf("follow: LINES: %v", err)
	}
	state := []string{"--state-dir", ts.Getenv("ANSIGHT_STATE_DIR")}
	var out lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		code <- Main(ctx, Env{Args: append(state, args[1:sep]...), Stdin: strings.NewReader(""), Stdout: &out, Stderr: ts.Stderr()})
	}()
	waitLines := func(n int) {
		for out.lines() < n { // however long a busy machine takes: go test's -timeout bounds a hang
			select {
			case c := <-code:
				ts.Fatalf("follow: the command ended (exit %d) after %d lines, %d wanted:\n%s", c, out.lines(), n, out.String())
			default:
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitLines(lines - 1)
	tctx, tcancel := context.WithCancel(context.Background())
	defer tcancel()
	if c := Main(tctx, Env{Args: append(state, args[sep+1:]...), Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: ts.Stderr()}); c != 0 {
		ts.Fatalf("follow: the trigger %s exited %d", strings.Join(args[sep+1:], " "), c)
	}
	waitLines(lines)
	cancel()
	if c := <-code; c != ExitOK {
		ts.Fatalf("follow: interrupted, the command exited %d, want %d (Ctrl-C is how a follow ends)", c, ExitOK)
	}
	if n := out.lines(); n != lines {
		ts.Fatalf("follow: %d lines after the interrupt, %d before: nothing may follow the records:\n%s", n, lines, out.String())
	}
	ts.Stdout().Write([]byte(out.String()))
}

// lockedBuffer is a buffer written by one goroutine and read by another.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuffer) lines() int { return strings.Count(l.String(), "\n") }

// cmdAPI sends GET PATH to the control API of $ANSIGHT_STATE_DIR's host, as curl
// --unix-socket would, and writes the answer's body to stdout: api STATUS PATH.
func cmdAPI(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: api STATUS PATH")
	}
	socket := filepath.Join(ts.Getenv("ANSIGHT_STATE_DIR"), hostapi.SocketName)
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", socket)
	}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://ansight"+args[1], nil)
	ts.Check(err)
	resp, err := c.Do(req)
	ts.Check(err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	ts.Check(err)
	if strconv.Itoa(resp.StatusCode) != args[0] {
		ts.Fatalf("api %s: status %d, want %s: %s", args[1], resp.StatusCode, args[0], body)
	}
	ts.Stdout().Write(body)
}
