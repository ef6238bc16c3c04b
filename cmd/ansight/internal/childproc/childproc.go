package childproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// roleEnv names the role a child process runs; its absence makes Main return.
const roleEnv = "ANSIGHT_CHILD_ROLE"

// Role is the body of a child process. It reads its configuration and any later messages
// from p, and reports to the parent with p.Send. Its context ends when the parent closes
// the child's stdin. A returned error is written to stderr and the child exits with 1.
type Role func(ctx context.Context, p *Parent) error

var (
	rolesMu sync.Mutex
	roles   = map[string]Role{}
)

// Register makes a role available to Start and Main. It panics when the name is taken.
func Register(name string, r Role) {
	rolesMu.Lock()
	defer rolesMu.Unlock()
	if _, dup := roles[name]; dup {
		panic("childproc: role " + name + " registered twice")
	}
	roles[name] = r
}

// Main runs the role this process was started for, and exits; in a process started
// otherwise it returns at once. Call it first in main and in TestMain.
func Main() {
	name, ok := os.LookupEnv(roleEnv)
	if !ok {
		return
	}
	rolesMu.Lock()
	r := roles[name]
	rolesMu.Unlock()
	if r == nil {
		fmt.Fprintf(os.Stderr, "childproc: no role %q in this executable\n", name)
		os.Exit(2)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := newParent(os.Stdin, os.Stdout, cancel)
	err := r(ctx, p)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "childproc: %s: %v\n", name, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Parent is a child's link to the process that started it.
type Parent struct {
	in  chan jsontext.Value
	mu  sync.Mutex
	enc *jsontext.Encoder
	out *bufio.Writer
}

func newParent(r io.Reader, w io.Writer, cancel context.CancelFunc) *Parent {
	p := &Parent{in: make(chan jsontext.Value, 64), out: bufio.NewWriter(w)}
	p.enc = jsontext.NewEncoder(p.out)
	go func() {
		defer cancel()
		defer close(p.in)
		dec := jsontext.NewDecoder(r)
		for {
			v, err := dec.ReadValue()
			if err != nil {
				return
			}
			p.in <- v.Clone()
		}
	}()
	return p
}

// Receive reads the parent's next value into v: the first one is the configuration. It
// returns io.EOF once the parent closed the child's stdin.
func (p *Parent) Receive(ctx context.Context, v any) error {
	var raw jsontext.Value
	var ok bool
	select {
	case raw, ok = <-p.in:
	case <-ctx.Done():
		// The parent closing stdin ends ctx too: what it sent before still counts.
		select {
		case raw, ok = <-p.in:
		default:
			return ctx.Err()
		}
	}
	if !ok {
		return io.EOF
	}
	return json.Unmarshal(raw, v)
}

// Send writes v to the parent at once.
func (p *Parent) Send(v any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := json.MarshalEncode(p.enc, v); err != nil {
		return err
	}
	return p.out.Flush()
}

// Child is a running child process.
type Child struct {
	role   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	enc    *jsontext.Encoder
	dec    *jsontext.Decoder
	stderr *tailBuffer
	waited chan struct{}
	err    error
}

// Start runs role in a child process and sends it config. The child inherits the
// environment; extraEnv ("NAME=value") is added to it.
func Start(role string, config any, extraEnv ...string) (*Child, error) {
	// A child whose main does not call Main runs as a normal process with the role in its
	// environment; were it to start a child in turn, each would start the next.
	if parent, ok := os.LookupEnv(roleEnv); ok {
		return nil, fmt.Errorf("childproc: this process was started for role %q but did not run it (its main must call childproc.Main): it may not start another", parent)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("childproc: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(append(os.Environ(), roleEnv+"="+role), extraEnv...)
	c := &Child{role: role, cmd: cmd, stderr: &tailBuffer{max: 16 << 10}, waited: make(chan struct{})}
	cmd.Stderr = c.stderr
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("childproc: start %s: %w", role, err)
	}
	go func() {
		c.err = cmd.Wait()
		close(c.waited)
	}()
	c.enc = jsontext.NewEncoder(c.stdin)
	c.dec = jsontext.NewDecoder(stdout)
	if err := c.Send(config); err != nil {
		c.Kill()
		return nil, err
	}
	return c, nil
}

// Send writes v to the child.
func (c *Child) Send(v any) error {
	if err := json.MarshalEncode(c.enc, v); err != nil {
		return fmt.Errorf("childproc: %s: send: %w%s", c.role, err, c.stderrNote())
	}
	return nil
}

// Receive reads the child's next value into v. When the child ended instead, the error
// says so, with the end of what it wrote to stderr.
func (c *Child) Receive(v any) error {
	raw, err := c.dec.ReadValue()
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			select {
			case <-c.waited:
				return fmt.Errorf("childproc: %s ended without answering (%v)%s", c.role, c.err, c.stderrNote())
			case <-time.After(5 * time.Second):
				return fmt.Errorf("childproc: %s closed its stdout without answering%s", c.role, c.stderrNote())
			}
		}
		return fmt.Errorf("childproc: %s: %w%s", c.role, err, c.stderrNote())
	}
	return json.Unmarshal(raw, v)
}

// Stop closes the child's stdin and waits for it to exit (Wait).
func (c *Child) Stop(grace time.Duration) (cpu time.Duration, err error) {
	c.CloseInput()
	return c.Wait(grace)
}

// CloseInput closes the child's stdin, which ends its role's context; the child may still
// send what it has to say before it exits.
func (c *Child) CloseInput() { c.stdin.Close() }

// Wait waits for the child to exit, killing it after grace. It returns the child's CPU
// time (user and system) and its exit error, if any.
func (c *Child) Wait(grace time.Duration) (cpu time.Duration, err error) {
	select {
	case <-c.waited:
	case <-time.After(grace):
		c.cmd.Process.Kill()
		<-c.waited
	}
	if st := c.cmd.ProcessState; st != nil {
		cpu = st.UserTime() + st.SystemTime()
	}
	if c.err != nil {
		return cpu, fmt.Errorf("childproc: %s: %w%s", c.role, c.err, c.stderrNote())
	}
	return cpu, nil
}

// Kill ends the child at once and waits for it.
func (c *Child) Kill() {
	c.stdin.Close()
	c.cmd.Process.Kill()
	<-c.waited
}

func (c *Child) stderrNote() string {
	s := strings.TrimSpace(c.stderr.String())
	if s == "" {
		return ""
	}
	return "; its stderr ends with: " + s
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
