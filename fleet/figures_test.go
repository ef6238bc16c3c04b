package fleet

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// TestFleetFigures measures the fleet against the local host, in the same run, for
// docs/performance.md. It is not a CI test (it takes a minute or two and asserts nothing
// about time):
//
//	ANSIGHT_FLEET_FIGURES=1 go test -run TestFleetFigures -v -timeout 20m ./fleet
//	# ANSIGHT_FLEET_FIGURES_SESSIONS=1000 (per host), ANSIGHT_FLEET_FIGURES_CALLS=3000 (per round)
//
// Everything runs in this process over loopback: the NATS server, the hosts, the apps and
// the callers, so the CPU time per operation (getrusage, user + system, of the whole
// process) counts every party of an operation.
func TestFleetFigures(t *testing.T) {
	if os.Getenv("ANSIGHT_FLEET_FIGURES") == "" {
		t.Skip("set ANSIGHT_FLEET_FIGURES=1 to measure the fleet (docs/performance.md)")
	}
	sessions := envInt(t, "ANSIGHT_FLEET_FIGURES_SESSIONS", 1000)
	calls := envInt(t, "ANSIGHT_FLEET_FIGURES_CALLS", 3000)
	ns := startNATS(t, nil)
	cfg := testConfig(ns)
	cfg.Logger = nil
	var load1, load5, load15 float64
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Sscan(string(b), &load1, &load5, &load15)
	}
	t.Logf("GOMAXPROCS %d, %d CPUs, load average %.2f %.2f %.2f at the start", runtime.GOMAXPROCS(0), runtime.NumCPU(), load1, load5, load15)
	callFigures(t, cfg, calls)
	listingFigures(t, cfg, sessions)
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		t.Logf("load average at the end: %s", strings.TrimSpace(string(b)))
	}
}

func envInt(t *testing.T, name string, def int) int {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("%s: %q", name, v)
		}
		return n
	}
	return def
}

// figureHost is a host with the default liveness intervals (heartbeats every 5 s), as a
// lab runs them.
func figureHost(t *testing.T, cfg Config, name string, burst int) *testHost {
	h := &testHost{t: t, name: name, dir: t.TempDir(), cfg: cfg, opts: MemberOptions{Config: cfg, Host: name, Version: "figures"}, burst: burst}
	h.start()
	t.Cleanup(h.close)
	return h
}

// path is one way to make the same call.
type path struct {
	name string
	call func(ctx context.Context) error
}

// callFigures times app.get_state of the demo app three ways, round by round in turn: in
// process (control.Backend: the floor), over the host's control socket (what 'ansight app
// call' and the MCP bridge use on the host's machine), and through the fleet (client →
// NATS → the host's member → control.Backend).
func callFigures(t *testing.T, cfg Config, calls int) {
	h := figureHost(t, cfg, "calls", 0)
	defer h.close() // leaves the fleet before the listing's figures
	sid := h.connectApp(notesApp)
	sock := filepath.Join(t.TempDir(), "host.sock")
	l, err := hostapi.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: hostapi.NewHandler(h.local)}
	go hs.Serve(l)
	defer hs.Close()
	socket := hostapi.NewClient(sock)
	c, err := Dial(context.Background(), ClientOptions{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	qid := QualifiedID(sid, "calls")
	req := hostapi.CallRequest{ToolID: "app.get_state"}
	check := func(res *hostapi.Call, err error) error {
		if err == nil && !res.Success {
			err = fmt.Errorf("call failed: %+v", res.Error)
		}
		return err
	}
	paths := []path{
		{"in process (control.Backend)", func(ctx context.Context) error { return check(h.local.Call(ctx, sid, req, nil)) }},
		{"control socket (HTTP over Unix socket)", func(ctx context.Context) error { return check(socket.Call(ctx, sid, req, nil)) }},
		{"fleet (NATS request/reply)", func(ctx context.Context) error { return check(c.Call(ctx, qid, req, nil)) }},
	}
	for _, callers := range []int{1, 8} {
		const rounds = 7
		wall := make([][]time.Duration, len(paths))
		cpu := make([][]time.Duration, len(paths))
		for _, p := range paths { // warm-up
			if err := runCalls(p.call, 200, callers); err != nil {
				t.Fatal(err)
			}
		}
		for r := range rounds {
			for i := range paths {
				p := paths[(i+r)%len(paths)] // each path takes each place in turn
				k := (i + r) % len(paths)
				c0, w0 := cpuTime(), time.Now()
				if err := runCalls(p.call, calls, callers); err != nil {
					t.Fatal(err)
				}
				wall[k] = append(wall[k], time.Since(w0)/time.Duration(calls))
				cpu[k] = append(cpu[k], (cpuTime()-c0)/time.Duration(calls))
			}
		}
		t.Logf("app.get_state, %d caller(s), %d calls a round, median of %d rounds:", callers, calls, rounds)
		base := median(wall[1])
		for i, p := range paths {
			w, cp := median(wall[i]), median(cpu[i])
			t.Logf("  %-40s %8s/call wall (%6.0f calls/s)  %8s CPU/call   wall ×%.2f of the socket's, CPU ×%.2f",
				p.name, w, float64(time.Second)/float64(w), cp, float64(w)/float64(base), float64(cp)/float64(median(cpu[1])))
		}
	}
}

// runCalls makes n calls from callers goroutines.
func runCalls(call func(context.Context) error, n, callers int) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for c := range callers {
		wg.Go(func() {
			for i := c; i < n; i += callers {
				if err := call(context.Background()); err != nil {
					mu.Lock()
					first = cmpOr(first, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// listingFigures lists a fleet of three hosts with n sessions each: a new client (connect,
// ask every host, list), a client whose cache is current, and one that fetches every
// host's list again; against one host's listing of its n sessions over its control socket.
func listingFigures(t *testing.T, cfg Config, n int) {
	hosts := []*testHost{figureHost(t, cfg, "l1", 3*n), figureHost(t, cfg, "l2", 3*n), figureHost(t, cfg, "l3", 3*n)}
	start := time.Now()
	var stops []func()
	for _, h := range hosts {
		stops = append(stops, connectMinimalApps(t, h, n)...)
	}
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	for _, h := range hosts {
		eventually(t, fmt.Sprintf("%d sessions on %s", n, h.name), func() bool { return openSessions(h.srv) == n })
	}
	t.Logf("%d sessions connected to 3 hosts in %v", 3*n, time.Since(start).Round(time.Millisecond))
	time.Sleep(2 * DefaultHeartbeat / 5) // the hosts announce the last changes

	sock := filepath.Join(t.TempDir(), "host.sock")
	l, err := hostapi.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: hostapi.NewHandler(hosts[0].local)}
	go hs.Serve(l)
	defer hs.Close()
	socket := hostapi.NewClient(sock)
	one, err := socket.Sessions(context.Background())
	if err != nil || len(one.Sessions) != n {
		t.Fatalf("local listing: %d sessions, %v", len(one.Sessions), err)
	}
	encoded, _ := json.Marshal(one.Sessions)

	ctx := context.Background()
	warm := dialClient(t, cfg)
	type sample struct{ wall, cpu []time.Duration }
	samples := map[string]*sample{}
	var order []string
	measure := func(name string, op func() int) {
		if samples[name] == nil {
			samples[name] = &sample{}
			order = append(order, name)
		}
		c0, w0 := cpuTime(), time.Now()
		if got := op(); got != 3*n && got != n {
			t.Fatalf("%s listed %d sessions", name, got)
		}
		s := samples[name]
		s.wall, s.cpu = append(s.wall, time.Since(w0)), append(s.cpu, cpuTime()-c0)
	}
	for range 9 { // the baseline and the fleet's listings alternate
		measure("one host, its control socket (baseline)", func() int {
			s, err := socket.Sessions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return len(s.Sessions)
		})
		measure("fleet, new client: connect, ask every host, list", func() int {
			c, err := Dial(ctx, ClientOptions{Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			s, err := c.Sessions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return len(s.Sessions)
		})
		measure("fleet, every host's list fetched again", func() int {
			warm.dir.mu.Lock()
			for _, p := range warm.dir.hosts {
				p.listRevision = "" // as if every host had announced a change
			}
			warm.dir.mu.Unlock()
			s, err := warm.Sessions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return len(s.Sessions)
		})
		measure("fleet, a client whose lists are current (no request)", func() int {
			s, err := warm.Sessions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return len(s.Sessions)
		})
	}
	t.Logf("listing 3 hosts × %d sessions (one host's list: %d bytes of JSON), median of %d:", n, len(encoded), len(samples[order[0]].wall))
	base := samples[order[0]]
	for _, name := range order {
		s := samples[name]
		t.Logf("  %-54s %9s wall  %9s CPU   wall ×%.1f, CPU ×%.1f of the baseline", name, median(s.wall).Round(time.Microsecond),
			median(s.cpu).Round(time.Microsecond), float64(median(s.wall))/float64(median(base.wall)), float64(median(s.cpu))/float64(median(base.cpu)))
	}
}

// connectMinimalApps connects n apps with one read tool each to h, reconnecting until
// stopped.
func connectMinimalApps(t *testing.T, h *testHost, n int) []func() {
	var stops []func()
	for i := range n {
		a := app.New(app.Options{})
		if err := app.Register(a, catalog.Definition{ID: "load.echo", Name: "Echo", Description: "Echoes.", Category: "load", Policy: wire.PolicyRead},
			func(ctx context.Context, c *app.Call, in struct{}) (struct{}, error) { return in, nil }); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		appID := fmt.Sprintf("dev.ansight.lab.app%04d", i)
		go func() {
			defer close(done)
			connect.Run(ctx, a, connect.Local{HostAddress: "127.0.0.1", DiscoveryPorts: []int{h.port}, EnrollTimeout: 5 * time.Second},
				connect.Options{AppID: appID, AppName: "lab app", AppVersion: "1.0", DeviceName: fmt.Sprintf("%s-device-%04d", h.name, i),
					StateDir: filepath.Join(h.dir, "apps", appID), ReconnectDelay: 50 * time.Millisecond, MaxReconnectDelay: time.Second})
		}()
		stops = append(stops, func() { cancel(); <-done })
	}
	return stops
}

func openSessions(srv *host.Server) int {
	n := 0
	for _, s := range srv.Sessions() {
		if in := s.Info(); in.State == host.StateConnected && in.Opened {
			n++
		}
	}
	return n
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
