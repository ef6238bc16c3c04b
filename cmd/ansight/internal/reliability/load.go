package reliability

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/cmd/ansight/internal/usage"
	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/host/tools"
)

// Defaults of LoadOptions.
const (
	DefaultSessions       = 200
	DefaultDuration       = 10 * time.Second
	DefaultBaseline       = time.Second
	DefaultInFlight       = 2
	DefaultBatchSize      = 4
	DefaultConnectTimeout = 2 * time.Minute
	DefaultSettleTimeout  = 20 * time.Second
	DefaultCallTimeout    = 30 * time.Second
)

// LoadOptions sizes a load run. The zero value is the standard run: 200 sessions for 10 s.
type LoadOptions struct {
	// Sessions is the number of concurrent app sessions (DefaultSessions).
	Sessions int
	// Duration is how long every session keeps sending requests (DefaultDuration).
	Duration time.Duration
	// Baseline is how long the at-rest baseline runs before the load: the same mix of
	// requests from one worker on one session, the others connected and idle
	// (DefaultBaseline, or Duration when that is shorter).
	Baseline time.Duration
	// InFlight is the number of concurrent requests per session (DefaultInFlight): more
	// than one makes requests of one session interleave on its connection.
	InFlight int
	// BatchSize is the number of calls in each batch (DefaultBatchSize, at most 32).
	BatchSize int
	// Dir holds the apps' identity files; a temporary directory, removed afterwards, when
	// empty. The host keeps its pairing state in memory.
	Dir string
	// ConnectTimeout bounds the time for every session to connect (DefaultConnectTimeout);
	// SettleTimeout bounds the wait for the goroutine count to come back after closing
	// (DefaultSettleTimeout); CallTimeout is the host's per-request timeout
	// (DefaultCallTimeout).
	ConnectTimeout, SettleTimeout, CallTimeout time.Duration
	// NoHeapProfile skips the attribution of heap bytes to the host (it sets
	// runtime.MemProfileRate to 1 while the sessions connect, which slows allocation).
	NoHeapProfile bool
	// CompleteMix runs the baseline and the load past Baseline and Duration until each kind
	// of request (a catalog query, a single call, a batch) has completed at least once,
	// or a request has gone wrong, or ctx is done: a short run on a machine whose cores
	// other processes keep busy (a test's) may otherwise end before its first call. Off,
	// as for `ansight bench --load`, the run ends at its durations whatever it completed.
	CompleteMix bool
	// AppProcess runs the apps in a child process of this executable (see childproc: its
	// main must call childproc.Main), so that the host and the apps each have their own
	// file descriptors, heap and CPU time: the host's figures are then measured directly
	// (no heap profile), and the apps' are reported beside them.
	AppProcess bool
	// Logger receives the host's and the apps' logs (discarded when nil).
	Logger *slog.Logger
	// Progress, when set, is told which phase starts.
	Progress func(phase string)
}

func (o LoadOptions) withDefaults() (LoadOptions, error) {
	set := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if o.Sessions <= 0 {
		o.Sessions = DefaultSessions
	}
	if o.InFlight <= 0 {
		o.InFlight = DefaultInFlight
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.BatchSize > 32 {
		return o, fmt.Errorf("reliability: BatchSize %d is above the protocol's 32", o.BatchSize)
	}
	if o.Sessions > 10000 || o.InFlight > 64 {
		return o, errors.New("reliability: at most 10000 sessions and 64 requests in flight per session")
	}
	set(&o.Duration, DefaultDuration)
	set(&o.Baseline, min(DefaultBaseline, o.Duration))
	set(&o.ConnectTimeout, DefaultConnectTimeout)
	set(&o.SettleTimeout, DefaultSettleTimeout)
	set(&o.CallTimeout, DefaultCallTimeout)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	if o.AppProcess {
		o.NoHeapProfile = true // the host is alone in this process
	}
	return o, nil
}

// RunLoad starts a host on loopback ports, connects opts.Sessions apps to it (local mode:
// UDP enrollment, WebSocket upgrade, control handshake), runs the mixed workload on every
// session for opts.Duration, then closes the apps and the host and waits for the goroutine
// count to settle. It returns an error when the run could not be carried out (the host did
// not start, the sessions did not all connect in time); lost or misrouted requests and
// goroutines that do not come back are findings of the report, see LoadReport.Check.
func RunLoad(ctx context.Context, opts LoadOptions) (*LoadReport, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	dir := opts.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "ansight-load-*"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
	}
	rep := &LoadReport{Sessions: opts.Sessions, InFlight: opts.InFlight, BatchSize: opts.BatchSize, AppProcess: opts.AppProcess}

	opts.Progress("baseline")
	settle()
	rep.Goroutines.Baseline = runtime.NumGoroutine()

	srv, err := host.New(hostOptions(opts))
	if err != nil {
		return nil, err
	}
	if err := srv.Start(ctx); err != nil {
		return nil, err
	}
	hostOpen := true
	defer func() {
		if hostOpen {
			srv.Close()
		}
	}()
	rep.Goroutines.HostIdle = idleGoroutines(ctx)
	rep.FileLimit = srv.FileLimit()

	// The exact heap profile starts here so that the host-idle snapshot and the
	// all-connected one differ only by what the sessions allocated.
	prevRate := runtime.MemProfileRate
	if !opts.NoHeapProfile {
		runtime.MemProfileRate = 1
	}
	settle()
	idleBefore := snapshotMemory(!opts.NoHeapProfile)

	where := ""
	if opts.AppProcess {
		where = " (apps in a child process)"
	}
	opts.Progress(fmt.Sprintf("connecting %d sessions%s", opts.Sessions, where))
	start := time.Now()
	var fleet appFleet
	port := int(srv.DiscoveryAddr().Port())
	if opts.AppProcess {
		fleet, err = startChildFleet(port, dir, opts)
	} else {
		fleet = startFleet(ctx, port, dir, opts)
	}
	if err != nil {
		return nil, err
	}
	sessions, err := awaitConnected(ctx, srv, fleet, opts.Sessions, opts.ConnectTimeout)
	rep.ConnectTime = usage.Millis(time.Since(start))
	if err != nil {
		runtime.MemProfileRate = prevRate
		fleet.stop()
		return nil, err
	}

	settle()
	idle := snapshotMemory(!opts.NoHeapProfile)
	runtime.MemProfileRate = prevRate
	rep.Goroutines.Connected = runtime.NumGoroutine()
	rep.Memory = memoryFigures(idleBefore, idle, opts.Sessions, !opts.NoHeapProfile)
	rep.Goroutines.HostPerSession = float64(idle.hostGoroutines-idleBefore.hostGoroutines) / float64(opts.Sessions)
	if opts.AppProcess {
		// The host is alone in this process: its whole heap and stacks are its own.
		apps, err := fleet.(*childFleet).measure()
		if err != nil {
			fleet.stop()
			return nil, err
		}
		rep.Memory = separateMemoryFigures(idleBefore, idle, apps, opts.Sessions)
		rep.Goroutines.HostPerSession = float64(idle.goroutines-idleBefore.goroutines) / float64(opts.Sessions)
	}

	opts.Progress(fmt.Sprintf("baseline at rest for %v: one session, one request at a time", opts.Baseline))
	runBaseline(ctx, sessions[0], fleet, opts, rep)

	opts.Progress(fmt.Sprintf("load for %v", opts.Duration))
	load, appsCPU := usage.Now(), fleet.cpu()
	runWorkload(ctx, sessions, opts, rep)
	appsCPU = fleet.cpu() - appsCPU
	rep.Machine = load.Since(appsCPU)
	rep.HostCPU, rep.AppsCPU = rep.Machine.Process, usage.Millis(appsCPU)

	rep.Held = countConnected(srv)
	rep.Reconnects = fleet.reconnects()

	opts.Progress("closing sessions")
	fleet.stop()
	rep.RunErrors = fleet.runErrors()
	waitDisconnected(ctx, srv, opts.SettleTimeout)
	rep.Goroutines.AfterSessions = settleGoroutines(ctx, rep.Goroutines.HostIdle, opts.SettleTimeout)

	opts.Progress("closing host")
	srv.Close()
	hostOpen = false
	rep.Goroutines.AfterHost = settleGoroutines(ctx, rep.Goroutines.Baseline, opts.SettleTimeout)
	return rep, nil
}

// startHost creates and starts a host; the caller closes it.
func startHost(ctx context.Context, opts host.Options) (*host.Server, error) {
	srv, err := host.New(opts)
	if err != nil {
		return nil, err
	}
	if err := srv.Start(ctx); err != nil {
		srv.Close()
		return nil, err
	}
	return srv, nil
}

// hostOptions configures the host for opts.Sessions apps, each its own installation (app
// id and device), connected at once. The budgets that bound what all apps together may
// hold are raised for the run: sessions, unused tokens (every app enrolls at the same
// moment, and a token dropped for a newer one would make its app enroll again) and local
// grants (a grant pruned between an app's enrollment and its upgrade would refuse the
// upgrade). The per-installation bounds and the enrollment rate keep their defaults: each
// app enrolls from a socket of its own.
func hostOptions(opts LoadOptions) host.Options {
	n := opts.Sessions
	return host.Options{
		DiscoveryAddr:  "127.0.0.1:0",
		ListenAddr:     "127.0.0.1:0",
		HostName:       "ansight-load",
		MaxSessions:    n + 8,
		MaxTokens:      max(host.DefaultMaxTokens, 2*n),
		MaxRetained:    n + 8,
		MaxLocalGrants: max(host.DefaultMaxLocalGrants, n+8),
		Tools:          tools.Options{Timeout: opts.CallTimeout, MaxPending: max(tools.DefaultMaxPending, 2*opts.InFlight)},
		Logger:         opts.Logger,
	}
}

// appFleet is the running apps, in this process or in a child.
type appFleet interface {
	// runErrors are the apps' connect.Run errors so far.
	runErrors() []string
	// reconnects counts connections beyond the first of each app.
	reconnects() int
	// cpu is the apps' process's CPU time so far (0 when they share this process).
	cpu() time.Duration
	// stop stops every app and waits for them.
	stop()
}

// fleet is the running apps of this process.
type fleet struct {
	wg     sync.WaitGroup
	cancel context.CancelFunc
	mu     sync.Mutex
	errs   []error
	conns  []atomic.Int32 // StateConnected reports per app
}

func appID(i int) string { return fmt.Sprintf("dev.ansight.load.app%04d", i) }

func appTag(i int) string { return fmt.Sprintf("app%04d", i) }

// startFleet starts opts.Sessions apps that enroll at the discovery port; they run until
// stop (ctx's values only are used).
func startFleet(ctx context.Context, port int, dir string, opts LoadOptions) *fleet {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f := &fleet{cancel: cancel, conns: make([]atomic.Int32, opts.Sessions)}
	for i := range opts.Sessions {
		tag := appTag(i)
		a, err := newLoadApp(tag, opts.Logger)
		if err != nil {
			f.fail(err)
			continue
		}
		// Thousands of enrollments may arrive at once and are answered in order: wait
		// longer than the SDKs' second before probing again.
		local := connect.Local{HostAddress: "127.0.0.1", DiscoveryPorts: []int{port}, EnrollTimeout: 5 * time.Second}
		o := connect.Options{
			AppID: appID(i), AppName: "load " + tag, AppVersion: "1.0", DeviceName: "load-" + tag,
			StateDir: filepath.Join(dir, tag),
			Logger:   opts.Logger, ReconnectDelay: 50 * time.Millisecond, MaxReconnectDelay: time.Second,
			OnState: func(s connect.StateChange) {
				if s.State == connect.StateConnected {
					f.conns[i].Add(1)
				}
			},
		}
		f.wg.Go(func() {
			if err := connect.Run(ctx, a, local, o); err != nil {
				f.fail(fmt.Errorf("%s: %w", tag, err))
			}
		})
	}
	return f
}

func (f *fleet) fail(err error) {
	f.mu.Lock()
	f.errs = append(f.errs, err)
	f.mu.Unlock()
}

func (f *fleet) stop() {
	f.cancel()
	f.wg.Wait()
}

func (f *fleet) cpu() time.Duration { return 0 }

// connected counts the apps that have connected at least once.
func (f *fleet) connected() int {
	n := 0
	for i := range f.conns {
		if f.conns[i].Load() > 0 {
			n++
		}
	}
	return n
}

func (f *fleet) runErrors() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, e := range f.errs {
		out = append(out, e.Error())
	}
	return out
}

// reconnects counts connections beyond the first of each app: a session that dropped.
func (f *fleet) reconnects() int {
	n := 0
	for i := range f.conns {
		n += max(0, int(f.conns[i].Load())-1)
	}
	return n
}

// loadSession is one app's session as the host sees it, with the app's tag.
type loadSession struct {
	index int
	tag   string
	sess  *host.Session
}

// awaitConnected waits until each of the n apps has an opened, connected session on the
// host.
func awaitConnected(ctx context.Context, srv *host.Server, f appFleet, n int, timeout time.Duration) ([]loadSession, error) {
	appIDs := make(map[string]int, n)
	for i := range n {
		appIDs[appID(i)] = i
	}
	deadline := time.Now().Add(timeout)
	// Listing thousands of sessions is not free: look less often the more there are.
	poll := 20*time.Millisecond + time.Duration(n)*10*time.Microsecond
	for {
		var got []loadSession
		for _, s := range srv.Sessions() {
			in := s.Info()
			i, ok := appIDs[in.AppID]
			if ok && in.Opened && in.State == host.StateConnected {
				got = append(got, loadSession{index: i, tag: appTag(i), sess: s})
			}
		}
		if len(got) == n {
			return got, nil
		}
		if errs := f.runErrors(); len(errs) > 0 {
			return nil, fmt.Errorf("reliability: an app stopped: %s", errs[0])
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("reliability: %d of %d sessions connected after %v", len(got), n, timeout)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(poll):
		}
	}
}

func countConnected(srv *host.Server) int {
	n := 0
	for _, s := range srv.Sessions() {
		if s.State() == host.StateConnected {
			n++
		}
	}
	return n
}

func waitDisconnected(ctx context.Context, srv *host.Server, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for countConnected(srv) > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
}

// settle collects garbage twice: the second cycle frees what finalizers of the first
// released, and publishes the heap profile of the first.
func settle() {
	runtime.GC()
	runtime.GC()
}

// idleGoroutines gives goroutines started by the host (its listeners) a moment to block,
// then counts.
func idleGoroutines(ctx context.Context) int {
	var last int
	for range 20 {
		n := runtime.NumGoroutine()
		if n == last {
			return n
		}
		last = n
		select {
		case <-ctx.Done():
			return n
		case <-time.After(5 * time.Millisecond):
		}
	}
	return last
}

// settleGoroutines waits until the goroutine count is at most target, or timeout, and
// returns the last count.
func settleGoroutines(ctx context.Context, target int, timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	for {
		n := runtime.NumGoroutine()
		if n <= target || time.Now().After(deadline) || ctx.Err() != nil {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}
