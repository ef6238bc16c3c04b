package cli

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
			os.Exit(Main(context.Background(), Env{Args: os.Args[1:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
		},
		"officialuiapp": officialUIAppMain,
	})
}

// TestScripts runs testdata/script/*.txtar: every command against a real host and the
// demo app, --json outputs parsed and checked, exit codes checked.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
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

// cmdWaitHost waits until the host in $ANSIGHT_STATE_DIR answers on its control socket.
func cmdWaitHost(ts *testscript.TestScript, neg bool, args []string) {
	waitHost(ts, "the host", func(ctx context.Context, c *hostapi.Client) bool {
		_, err := c.Status(ctx)
		return err == nil
	})
}

// waitHost polls the host of $ANSIGHT_STATE_DIR until ready holds, for at most 45 s.
func waitHost(ts *testscript.TestScript, what string, ready func(context.Context, *hostapi.Client) bool) {
	c := hostapi.NewClient(filepath.Join(ts.Getenv("ANSIGHT_STATE_DIR"), hostapi.SocketName))
	for { // however long a busy machine takes: go test's -timeout bounds a hang
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // one attempt, retried
		ok := ready(ctx, c)
		cancel()
		if ok {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
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
