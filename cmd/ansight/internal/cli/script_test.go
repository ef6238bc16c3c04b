package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/ansight-go/ansight/cmd/ansight/internal/childproc"
	"github.com/ansight-go/ansight/hostapi"
)

// TestMain lets scripts exec the real command tree as "ansight" (a re-executed test
// binary), so background hosts run in their own processes as they do for users.
func TestMain(m *testing.M) {
	childproc.Main() // bench --load and --enroll-flood run their apps in a child
	testscript.Main(m, map[string]func(){
		"ansight": func() {
			os.Exit(Process(Env{Args: os.Args[1:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
		},
		"officialuiapp": officialUIAppMain,
	})
}

// TestScripts runs testdata/script/*.txtar: every command against a real host and the
// demo app, --json outputs parsed and checked, exit codes checked.
func TestScripts(t *testing.T) {
	// Bounded by the test's deadline: at it (less testscript's grace periods) a command
	// still running gets SIGQUIT, so that a command or a wait that hangs fails its script
	// with the command's goroutine dump in the log, rather than holding the script until
	// the whole binary times out with no trace of the command. (A background command the
	// script leaves running gets testscript's interrupt at the end, whose outcome is not
	// checked: scripts stop theirs and wait.)
	deadline, _ := t.Deadline()
	testscript.Run(t, testscript.Params{
		Dir:      "testdata/script",
		Deadline: deadline,
		Setup: func(env *testscript.Env) error {
			env.Setenv("ANSIGHT_STATE_DIR", filepath.Join(env.WorkDir, "state"))
			tree, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "wire", "uitree", "testdata", "official", "android-views.json"))
			if err != nil {
				return err
			}
			env.Setenv("OFFICIAL_UI_TREE", tree)
			env.Setenv("HOME", env.WorkDir)
			wd, err := os.Getwd()
			if err != nil {
				return err
			}
			env.Setenv("RECORDING_TESTDATA", filepath.Join(wd, "..", "..", "..", "..", "recording", "testdata"))
			// The flows the repository ships (flows.txtar runs them through the binary).
			env.Setenv("EXAMPLES", filepath.Join(wd, "..", "..", "..", "..", "examples", "flows"))
			return nil
		},
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"cli":          cmdCLI,
			"waitsession":  cmdWaitSession,
			"json":         cmdJSON,
			"imagesize":    cmdImageSize,
			"filemode":     cmdFileMode,
			"officialapp":  cmdOfficialApp,
			"fileapp":      cmdFileApp,
			"waithost":     cmdWaitHost,
			"follow":       cmdFollow,
			"api":          cmdAPI,
			"natsserver":   cmdNATSServer,
			"waitfleet":    cmdWaitFleet,
			"demosignin":   cmdDemoSignIn,
			"archiveholds": cmdArchiveHolds,
			"now":          cmdNow,
			"slowapp":      cmdSlowApp,
			"lockfree":     cmdLockFree,
		},
		Condition: func(cond string) (bool, error) {
			if cond != "ipv6" {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			c, err := net.ListenPacket("udp", "[::1]:0")
			if err == nil {
				c.Close()
			}
			return err == nil, nil
		},
	})
}

// cmdCLI runs the command tree in process: cli EXIT args... checks the exit code; stdout
// and stderr are those of the run.
func cmdCLI(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: cli EXITCODE args...")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("cli: exit code: %v", err)
	}
	var stdin bytes.Buffer
	argv := append([]string{"--state-dir", ts.Getenv("ANSIGHT_STATE_DIR")}, args[1:]...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lookup := func(name string) (string, bool) { v := ts.Getenv(name); return v, v != "" }
	got := Main(ctx, Env{Args: argv, Stdin: &stdin, Stdout: ts.Stdout(), Stderr: ts.Stderr(), LookupEnv: lookup})
	if got != want {
		ts.Fatalf("cli %s: exit code %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

// cmdLockFree checks that no host holds the lock of $ANSIGHT_STATE_DIR (it has exited):
// lockfree; ! lockfree checks that one does.
func cmdLockFree(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 0 {
		ts.Fatalf("usage: lockfree")
	}
	if lockFree(ts.Getenv("ANSIGHT_STATE_DIR")) == neg {
		ts.Fatalf("lockfree: the host lock free: %v, want %v", !neg, !neg)
	}
}

// cmdNow sets $VAR to the current time in RFC 3339 (for --since): now VAR.
func cmdNow(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: now VAR")
	}
	ts.Setenv(args[0], time.Now().UTC().Format(time.RFC3339Nano))
}

// cmdWaitSession waits until the host in $ANSIGHT_STATE_DIR has a connected session and
// sets $SESSION to its id; waitsession APPID VAR waits for a session of that app and sets
// $VAR.
func cmdWaitSession(ts *testscript.TestScript, neg bool, args []string) {
	appID, name := "", "SESSION"
	if len(args) == 2 {
		appID, name = args[0], args[1]
	} else if len(args) != 0 {
		ts.Fatalf("usage: waitsession [APPID VAR]")
	}
	waitHost(ts, "a connected session", func(ctx context.Context, c *hostapi.Client) bool {
		s, err := c.Sessions(ctx)
		if err != nil {
			return false
		}
		for _, ss := range s.Sessions {
			if ss.State == hostapi.StateConnected && (appID == "" || ss.AppID == appID) {
				ts.Setenv(name, ss.ID)
				return true
			}
		}
		return false
	})
}

// cmdWaitHost waits until the host in $ANSIGHT_STATE_DIR answers on its control socket;
// ! waithost waits until the host started there in the background has exited without
// answering (what a script whose host cannot start sees).
func cmdWaitHost(ts *testscript.TestScript, neg bool, args []string) {
	gone := awaitHost(ts, func(ctx context.Context, c *hostapi.Client) bool {
		_, err := c.Status(ctx)
		return err == nil
	})
	switch {
	case gone != "" && !neg:
		ts.Fatalf("waiting for the host: the host exited (its output follows): %s", gone)
	case gone == "" && neg:
		ts.Fatalf("waithost: the host answered")
	}
}

// waitHost polls the host of $ANSIGHT_STATE_DIR until ready holds, however long a busy
// machine takes; it fails as soon as the host the script started there in the background
// has exited (one that could not bind its ports, or found the state directory locked),
// rather than waiting for go test's -timeout.
func waitHost(ts *testscript.TestScript, what string, ready func(context.Context, *hostapi.Client) bool) {
	if gone := awaitHost(ts, ready); gone != "" {
		ts.Fatalf("waiting for %s: the host exited (its output follows): %s", what, gone)
	}
}

// awaitHost polls the host of $ANSIGHT_STATE_DIR until ready holds ("") or the host the
// script started there has exited (its command line).
func awaitHost(ts *testscript.TestScript, ready func(context.Context, *hostapi.Client) bool) string {
	dir := ts.Getenv("ANSIGHT_STATE_DIR")
	c := hostapi.NewClient(filepath.Join(dir, hostapi.SocketName))
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // one attempt, retried
		ok := ready(ctx, c)
		cancel()
		if ok {
			return ""
		}
		if gone := hostGone(ts, dir); gone != "" {
			return gone
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// hostGone returns the command line of the last 'ansight' the script started in the
// background (since its last wait) on state directory dir when it has exited and no
// other started there still runs; "" otherwise, or when none was started there (a host
// started in process, or by a harness command). A script that stops a host and starts
// another without a wait has both in the list: only the one still running counts.
func hostGone(ts *testscript.TestScript, dir string) string {
	gone := ""
	for _, c := range ts.BackgroundCmds() {
		if filepath.Base(c.Path) != "ansight" || backgroundStateDir(c) != dir {
			continue
		}
		if !exited(c) {
			return ""
		}
		gone = commandLine(c)
	}
	return gone
}

// commandLine is c as the script wrote it (the program by its name, not its path).
func commandLine(c *exec.Cmd) string {
	return strings.Join(append([]string{filepath.Base(c.Path)}, c.Args[1:]...), " ")
}

// exited reports whether a background command has ended. testscript's own goroutine
// waits for it (reading its ProcessState here would race with that); a signal 0 to a
// process already waited for fails with os.ErrProcessDone.
func exited(c *exec.Cmd) bool {
	return errors.Is(c.Process.Signal(syscall.Signal(0)), os.ErrProcessDone)
}

// backgroundStateDir is the state directory an 'ansight' command runs on: its
// --state-dir, else the $ANSIGHT_STATE_DIR it was started with.
func backgroundStateDir(c *exec.Cmd) string {
	for i, a := range c.Args {
		if a == "--state-dir" && i+1 < len(c.Args) {
			return c.Args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--state-dir="); ok {
			return v
		}
	}
	dir := ""
	for _, kv := range c.Env {
		if v, ok := strings.CutPrefix(kv, "ANSIGHT_STATE_DIR="); ok {
			dir = v // the last one wins, as in the process
		}
	}
	return dir
}

// anyExited returns the command line of an 'ansight' started in the background (since the
// script's last wait) that has exited, or "".
func anyExited(ts *testscript.TestScript) string {
	for _, c := range ts.BackgroundCmds() {
		if filepath.Base(c.Path) == "ansight" && exited(c) {
			return commandLine(c)
		}
	}
	return ""
}

// cmdJSON checks the last stdout as JSON: json PATH VALUE compares the value at the dotted
// path (array indices as numbers) with VALUE (compared as compact JSON when VALUE parses as
// JSON, else as a string); json PATH -set VAR stores the string value in $VAR;
// json PATH -prefix P checks a string prefix.
func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 && len(args) != 3 {
		ts.Fatalf("usage: json PATH VALUE | json PATH -set VAR | json PATH -prefix P")
	}
	var doc any
	if err := json.Unmarshal([]byte(ts.ReadFile("stdout")), &doc); err != nil {
		ts.Fatalf("json: stdout is not JSON: %v", err)
	}
	v, ok := lookup(doc, args[0])
	if !ok {
		if neg {
			return
		}
		ts.Fatalf("json: no %s in stdout", args[0])
	}
	switch {
	case len(args) == 3 && args[1] == "-set":
		ts.Setenv(args[2], fmt.Sprint(v))
	case len(args) == 3 && args[1] == "-prefix":
		if s, _ := v.(string); strings.HasPrefix(s, args[2]) == neg {
			ts.Fatalf("json: %s = %q, prefix %q wanted: %v", args[0], s, args[2], !neg)
		}
	default:
		got, _ := json.Marshal(v, json.Deterministic(true))
		want := jsontext.Value(args[1])
		if err := want.Compact(); err != nil {
			want, _ = json.Marshal(args[1])
		}
		if (string(got) == string(want)) == neg {
			ts.Fatalf("json: %s = %s, want %s (negated: %v)", args[0], got, want, neg)
		}
	}
}

func lookup(doc any, path string) (any, bool) {
	cur := doc
	for _, part := range strings.Split(path, ".") {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[part]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// cmdImageSize checks that a file is an image of the given size with at least MINCOLOURS
// distinct colours (default 8: not blank): imagesize FILE W H [MINCOLOURS].
func cmdImageSize(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 && len(args) != 4 {
		ts.Fatalf("usage: imagesize FILE W H [MINCOLOURS]")
	}
	minColours := 8
	if len(args) == 4 {
		minColours, _ = strconv.Atoi(args[3])
	}
	f, err := os.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	defer f.Close()
	img, format, err := image.Decode(f)
	if err != nil {
		ts.Fatalf("imagesize: %s is not an image: %v", args[0], err)
	}
	b := img.Bounds()
	if fmt.Sprint(b.Dx()) != args[1] || fmt.Sprint(b.Dy()) != args[2] {
		ts.Fatalf("imagesize: %s is %dx%d %s, want %sx%s", args[0], b.Dx(), b.Dy(), format, args[1], args[2])
	}
	// A blank image would pass the size check: require some variety of colours.
	seen := map[uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bb, _ := img.At(x, y).RGBA()
			seen[r>>8<<16|g>>8<<8|bb>>8] = true
		}
	}
	if len(seen) < minColours {
		ts.Fatalf("imagesize: %s has only %d colours: blank?", args[0], len(seen))
	}
}

// cmdFileMode checks a file's permission bits: filemode FILE 0600.
func cmdFileMode(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: filemode FILE MODE")
	}
	st, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	if got := fmt.Sprintf("%04o", st.Mode().Perm()); got != args[1] {
		ts.Fatalf("filemode: %s is %s, want %s", args[0], got, args[1])
	}
}
