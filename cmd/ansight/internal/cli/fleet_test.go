package cli

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/ansight-go/ansight/fleet"
	"github.com/ansight-go/ansight/hostapi"
)

// startNATS starts a NATS server in this process on a free loopback port and returns its
// URL and a function that stops it.
func startNATS() (string, func(), error) {
	return startNATSWith(&server.Options{})
}

// startNATSWith starts a NATS server with opts on a free loopback port.
func startNATSWith(opts *server.Options) (string, func(), error) {
	opts.Host, opts.Port, opts.NoLog, opts.NoSigs = "127.0.0.1", -1, true, true
	s, err := server.NewServer(opts)
	if err != nil {
		return "", nil, err
	}
	s.Start()
	stop := func() { s.Shutdown(); s.WaitForShutdown() }
	if !s.ReadyForConnections(10 * time.Second) {
		stop()
		return "", nil, errors.New("the NATS server did not start")
	}
	return "nats://127.0.0.1:" + strconv.Itoa(s.Addr().(*net.TCPAddr).Port), stop, nil
}

// cmdNATSServer starts a NATS server for the script and sets $NATS_URL.
func cmdNATSServer(ts *testscript.TestScript, neg bool, args []string) {
	url, stop, err := startNATS()
	if err != nil {
		ts.Fatalf("natsserver: %v", err)
	}
	ts.Defer(stop)
	ts.Setenv("NATS_URL", url)
}

// cmdWaitFleet waits until fleet NAME lists N connected sessions: waitfleet NAME N.
func cmdWaitFleet(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: waitfleet NAME N")
	}
	want, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("waitfleet: %v", err)
	}
	for connectedInFleet(ts.Getenv("NATS_URL"), args[0]) != want { // however long a busy machine takes
		if gone := anyExited(ts); gone != "" { // a host that could not start ends the wait
			ts.Fatalf("waitfleet: a host exited (its output follows): %s", gone)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func connectedInFleet(url, name string) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := fleet.Dial(ctx, fleet.ClientOptions{Config: fleet.Config{URL: url, Fleet: name}})
	if err != nil {
		return -1
	}
	defer c.Close()
	s, err := c.Sessions(ctx)
	if err != nil {
		return -1
	}
	n := 0
	for _, v := range s.Sessions {
		if v.State == hostapi.StateConnected {
			n++
		}
	}
	return n
}

// TestMCPFleet drives 'ansight mcp --fleet' with the go-sdk client: an agent sees the
// sessions of a fleet's host and calls its tools, screenshots included.
func TestMCPFleet(t *testing.T) {
	url, stop, err := startNATS()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	dir := t.TempDir()
	discard := slog.New(slog.DiscardHandler)
	var rh *runningHost
	rh, err = startHost(t.Context(), hostConfig{stateDir: dir, discovery: "127.0.0.1:0", listen: "127.0.0.1:0", logger: discard,
		fleet: &fleet.Config{URL: url, Fleet: "lab"}, fleetHost: "lab-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer rh.close()
	stopApp, err := connectDemoApp(t.Context(), rh, dir, discard)
	if err != nil {
		t.Fatal(err)
	}
	defer stopApp()

	cs, wait := mcpRun(t, "--fleet", url, "--fleet-name", "lab", "--state-dir", t.TempDir())
	var sessions struct {
		Sessions []struct{ SessionID, AppID string }
	}
	for len(sessions.Sessions) == 0 && t.Context().Err() == nil {
		callJSON(t, cs, "ansight_list_sessions", nil, &sessions) // the host announces the app within 50 ms
	}
	if len(sessions.Sessions) != 1 || sessions.Sessions[0].SessionID != "com-ansight-demo-notes-001@lab-a" {
		t.Fatalf("sessions: %+v", sessions)
	}
	var call struct{ Success bool }
	callJSON(t, cs, "ansight_call_app_tool", map[string]any{"toolId": "notes.create", "arguments": map[string]any{"title": "agent"}}, &call)
	if !call.Success {
		t.Fatalf("call: %+v", call)
	}
	shot := callJSON(t, cs, "ansight_take_screenshot", nil, nil)
	img, ok := shot.Content[len(shot.Content)-1].(*mcp.ImageContent)
	if shot.IsError || !ok {
		t.Fatalf("screenshot: %+v", shot.Content)
	}
	if _, err := png.DecodeConfig(bytes.NewReader(img.Data)); err != nil {
		t.Fatalf("screenshot image: %v", err)
	}
	if code := wait(); code != ExitOK {
		t.Fatalf("exit code %d", code)
	}
}

// TestFleetUnreachable: a fleet whose NATS server does not answer is exit code 4, with
// the credentials of its URL hidden.
func TestFleetUnreachable(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main(t.Context(), Env{Args: []string{"--fleet", "nats://ci:hunter2@127.0.0.1:1", "session", "list"}, Stdout: &out, Stderr: &errb})
	if code != ExitHostUnavailable || bytes.Contains(errb.Bytes(), []byte("hunter2")) || !bytes.Contains(errb.Bytes(), []byte("NATS")) {
		t.Fatalf("exit %d, stderr %s", code, errb.String())
	}
}

// TestFleetCredentialsRefused: wrong fleet credentials are an access refusal (exit 6, with
// what to check), not an unreachable host (exit 4), and the password is not shown.
func TestFleetCredentialsRefused(t *testing.T) {
	url, stop, err := startNATSWith(&server.Options{Username: "lab", Password: "right-pass"})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var out, errb bytes.Buffer
	bad := strings.Replace(url, "nats://", "nats://lab:hunter2@", 1)
	code := Main(t.Context(), Env{Args: []string{"--fleet", bad, "session", "list"}, Stdout: &out, Stderr: &errb})
	if code != ExitAccessDenied || bytes.Contains(errb.Bytes(), []byte("hunter2")) || !bytes.Contains(errb.Bytes(), []byte("credentials")) {
		t.Fatalf("exit %d, stderr %s", code, errb.String())
	}
}

// TestPlayerFleet: the player of a host that joined a fleet lists every host's sessions
// (its own under their plain ids) and reads a remote session's catalog over the fleet.
func TestPlayerFleet(t *testing.T) {
	url, stop, err := startNATS()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop) // after the hosts have left
	discard := slog.New(slog.DiscardHandler)
	start := func(name, player string) *runningHost {
		dir := t.TempDir()
		rh, err := startHost(t.Context(), hostConfig{stateDir: dir, discovery: "127.0.0.1:0", listen: "127.0.0.1:0", logger: discard,
			player: player, fleet: &fleet.Config{URL: url, Fleet: "lab"}, fleetHost: name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(rh.close)
		stopApp, err := connectDemoApp(t.Context(), rh, dir, discard)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stopApp)
		return rh
	}
	a := start("lab-a", "127.0.0.1:0")
	start("lab-b", "")

	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	defer hc.CloseIdleConnections()
	get := func(path string, v any) {
		t.Helper()
		u := a.PlayerURL() // opens the session (the token becomes a cookie)
		if path != "" {
			u = strings.Split(a.PlayerURL(), "/?")[0] + path
		}
		resp, err := hc.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		if v != nil {
			if err := json.UnmarshalRead(resp.Body, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	get("", nil)
	var list hostapi.Sessions
	for len(list.Sessions) != 2 && t.Context().Err() == nil {
		get("/api/sessions", &list)
		time.Sleep(20 * time.Millisecond)
	}
	var ids []string
	for _, s := range list.Sessions {
		ids = append(ids, s.ID+" "+s.Host)
	}
	if strings.Join(ids, ", ") != "com-ansight-demo-notes-001 lab-a, com-ansight-demo-notes-001@lab-b lab-b" {
		t.Fatalf("the player lists %q", ids)
	}
	var tools hostapi.Tools
	get("/api/sessions/com-ansight-demo-notes-001@lab-b/tools", &tools)
	if tools.SessionID != "com-ansight-demo-notes-001@lab-b" || tools.TotalCount == 0 {
		t.Fatalf("remote catalog: %+v", tools)
	}
}
