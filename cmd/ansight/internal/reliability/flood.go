package reliability

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ansight-go/ansight/cmd/ansight/internal/childproc"
	"github.com/ansight-go/ansight/cmd/ansight/internal/usage"
	"github.com/ansight-go/ansight/host"
)

// Defaults of FloodOptions.
const (
	DefaultFloodApps   = 10000
	DefaultFloodWindow = 5 * time.Second
	DefaultFloodWait   = 15 * time.Second
)

// FloodOptions sizes an enrollment flood. The zero value is the standard run: 10,000 apps
// send ENROLLMENT_CONNECT at once, each from a socket of its own, while one misbehaving
// socket sends as many.
type FloodOptions struct {
	// Apps is the number of apps (sockets), one ENROLLMENT_CONNECT each (DefaultFloodApps).
	Apps int
	// Flooder is the number of datagrams the misbehaving socket sends during the burst: one
	// installation enrolling in a loop (default: as many as Apps; negative: none).
	Flooder int
	// Window is the time within which every app should be answered (DefaultFloodWindow);
	// Wait how long answers are waited for (DefaultFloodWait).
	Window, Wait time.Duration
	// Host adjusts the host's options; the run uses the host's defaults otherwise, with its
	// pairing store in a temporary directory (written as a resident host writes it).
	Host func(*host.Options)
	// Progress, when set, is told which phase starts.
	Progress func(phase string)
}

func (o FloodOptions) withDefaults() (FloodOptions, error) {
	if o.Apps <= 0 {
		o.Apps = DefaultFloodApps
	}
	if o.Apps > 100000 {
		return o, errors.New("reliability: at most 100000 apps in a flood")
	}
	switch {
	case o.Flooder == 0:
		o.Flooder = o.Apps
	case o.Flooder < 0:
		o.Flooder = 0
	}
	if o.Window <= 0 {
		o.Window = DefaultFloodWindow
	}
	if o.Wait <= 0 {
		o.Wait = max(DefaultFloodWait, o.Window)
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	return o, nil
}

// FloodReport is the outcome of an enrollment flood.
type FloodReport struct {
	Apps   int          `json:"apps"`
	Window usage.Millis `json:"windowMs"`
	// InWindow apps were answered within Window of the burst's start, Late ones after it,
	// Lost ones never (within Wait).
	InWindow int `json:"inWindow"`
	Late     int `json:"late"`
	Lost     int `json:"lost"`
	// Accepted answers, and refusals by reason; Mismatched answers were not to the
	// socket's own request.
	Accepted   int            `json:"accepted"`
	Refusals   map[string]int `json:"refusals,omitempty"`
	Mismatched int            `json:"mismatched"`
	// SendTime is how long the fleet took to send every app's datagram; LastAnswer the
	// time from the burst's start to the last answer; P50, P99 and Max the time from an
	// app's datagram to its answer (the quantiles within 1/16, never above Max).
	SendTime   usage.Millis `json:"sendMs"`
	LastAnswer usage.Millis `json:"lastAnswerMs"`
	P50        usage.Millis `json:"p50Ms"`
	P99        usage.Millis `json:"p99Ms"`
	Max        usage.Millis `json:"maxMs"`
	// FlooderSent datagrams of the misbehaving socket, FlooderAnswered answered; at most
	// FlooderAllowed may be (the per-sender burst and what the interval refilled).
	FlooderSent     int `json:"flooderSent"`
	FlooderAnswered int `json:"flooderAnswered"`
	FlooderAllowed  int `json:"flooderAllowed"`
	// KernelDrops is the datagrams the host's socket dropped because its receive buffer was
	// full (/proc/net/udp), -1 when unknown.
	KernelDrops int64 `json:"kernelDrops"`
	// Enrollment is the host's enrollment counters and socket buffer after the run.
	Enrollment host.EnrollmentStats `json:"enrollment"`
	// HostCPU is the host process's CPU time from the burst's start to the fleet's report,
	// FleetCPU the senders'; Machine the conditions (wall time, other work, load).
	HostCPU  usage.Millis `json:"hostCpuMs"`
	FleetCPU usage.Millis `json:"fleetCpuMs"`
	Machine  usage.Span   `json:"machine"`
}

// RunEnrollFlood starts a host with default budgets in this process and a fleet of opts.Apps
// UDP sockets in a child process (childproc: the executable must call childproc.Main), and
// sends every app's ENROLLMENT_CONNECT at once while one more socket floods. It returns an
// error when the run could not be carried out; lost or mismatched answers and a flooder
// answered beyond its budget are findings of the report (FloodReport.Check).
func RunEnrollFlood(ctx context.Context, opts FloodOptions) (*FloodReport, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "ansight-flood-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	hopts := host.Options{
		DiscoveryAddr: "127.0.0.1:0", ListenAddr: "127.0.0.1:0", HostName: "ansight-flood", StateDir: dir,
		// Every enrollment is logged, as the resident host logs it, formatting included.
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if opts.Host != nil {
		opts.Host(&hopts)
	}
	srv, err := startHost(ctx, hopts)
	if err != nil {
		return nil, err
	}
	defer srv.Close()

	opts.Progress(fmt.Sprintf("opening %d sockets", opts.Apps+1))
	child, err := childproc.Start(floodRole, floodConfig{Target: srv.DiscoveryAddr().String(), Apps: opts.Apps,
		Flooder: opts.Flooder, Wait: usage.Millis(opts.Wait), Window: usage.Millis(opts.Window)})
	if err != nil {
		return nil, err
	}
	defer child.Kill()
	var ready floodReady
	if err := child.Receive(&ready); err != nil {
		return nil, err
	}

	opts.Progress(fmt.Sprintf("%d enrollments at once, and a flooder sending %d", opts.Apps, opts.Flooder))
	drops0, dropsKnown := udpDrops(srv.DiscoveryAddr())
	start := usage.Now()
	if err := child.Send(floodStart{Go: true}); err != nil {
		return nil, err
	}
	var res floodResult
	if err := child.Receive(&res); err != nil {
		return nil, err
	}
	machine := start.Since(res.CPU.D())
	drops1, _ := udpDrops(srv.DiscoveryAddr())
	if _, err := child.Stop(10 * time.Second); err != nil {
		return nil, err
	}
	b := hopts.EnrollmentBurst
	if b <= 0 {
		b = host.DefaultEnrollmentBurst
	}
	interval := hopts.EnrollmentInterval
	if interval <= 0 {
		interval = host.DefaultEnrollmentInterval
	}
	rep := &FloodReport{
		Apps: opts.Apps, Window: usage.Millis(opts.Window), InWindow: res.InWindow, Late: res.Late,
		Lost: res.Sent - res.InWindow - res.Late, Accepted: res.Accepted, Refusals: res.Refusals, Mismatched: res.Mismatched,
		SendTime: res.SendTime, LastAnswer: res.LastAnswer, P50: res.P50, P99: res.P99, Max: res.Max,
		FlooderSent: res.FlooderSent, FlooderAnswered: res.FlooderAnswered,
		// One more per interval the flood lasted, and one for the interval begun.
		FlooderAllowed: b + int(machine.Wall.D()/interval) + 1,
		KernelDrops:    -1, Enrollment: srv.EnrollmentStats(),
		HostCPU: machine.Process, FleetCPU: res.CPU, Machine: machine,
	}
	if dropsKnown {
		rep.KernelDrops = drops1 - drops0
	}
	return rep, nil
}

// Check returns an error listing every way the run fell short of the protocol's promises:
// an app that got no answer, or another request's, or a refusal (with default budgets a
// local enrollment is accepted); a flooder answered beyond its budget. Time is a figure of
// the report, not a check.
func (r *FloodReport) Check() error {
	var errs []error
	if r.Lost != 0 {
		errs = append(errs, fmt.Errorf("%d of %d apps got no answer", r.Lost, r.Apps))
	}
	if r.Mismatched != 0 {
		errs = append(errs, fmt.Errorf("%d answers were not to the app's own request", r.Mismatched))
	}
	if n := len(r.Refusals); n != 0 {
		errs = append(errs, fmt.Errorf("refusals: %v", r.Refusals))
	}
	if r.FlooderAnswered > r.FlooderAllowed {
		errs = append(errs, fmt.Errorf("the flooder got %d answers, more than its %d", r.FlooderAnswered, r.FlooderAllowed))
	}
	return shortfalls(errs)
}

// WriteText writes the report for people.
func (r *FloodReport) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "enrollment flood: %d apps, each from its own socket, sent in %v; a flooder sent %d from one socket\n",
		r.Apps, r.SendTime.D().Round(time.Millisecond), r.FlooderSent)
	fmt.Fprintf(&b, "  answered   %d within %v, %d later, %d lost (last answer %v after the start)\n",
		r.InWindow, r.Window, r.Late, r.Lost, r.LastAnswer.D().Round(time.Millisecond))
	refused := "none refused"
	if len(r.Refusals) > 0 {
		refused = fmt.Sprintf("refused %v", r.Refusals)
	}
	fmt.Fprintf(&b, "  answers    %d accepted, %s, %d mismatched\n", r.Accepted, refused, r.Mismatched)
	fmt.Fprintf(&b, "  time to answer p50 %v, p99 %v, max %v\n", r.P50.D().Round(time.Microsecond), r.P99.D().Round(time.Microsecond), r.Max.D().Round(time.Microsecond))
	fmt.Fprintf(&b, "  flooder    %d of %d answered (its budget: %d)\n", r.FlooderAnswered, r.FlooderSent, r.FlooderAllowed)
	e := r.Enrollment
	drops := "unknown"
	if r.KernelDrops >= 0 {
		drops = strconv.FormatInt(r.KernelDrops, 10)
	}
	fmt.Fprintf(&b, "  host       read %d datagrams: %d over a sender's rate, %d over the queue; kernel drops %s\n",
		e.Received, e.RateLimited, e.QueueFull, drops)
	fmt.Fprintf(&b, "  socket     %s\n", e.ReceiveBufferText())
	fmt.Fprintf(&b, "  CPU        host %v (%.0f µs per app answered), fleet %v; %v wall, %s\n",
		r.HostCPU.D().Round(time.Millisecond), perApp(r.HostCPU.D(), r.InWindow+r.Late), r.FleetCPU.D().Round(time.Millisecond),
		r.Machine.Wall.D().Round(time.Millisecond), r.Machine.Conditions())
	if err := r.Check(); err != nil {
		fmt.Fprintf(&b, "  FAILED: %v\n", strings.ReplaceAll(err.Error(), "\n", "; "))
	} else if r.InWindow == r.Apps {
		fmt.Fprintf(&b, "  ok: every app answered within %v\n", r.Window)
	} else {
		fmt.Fprintf(&b, "  ok, but %d apps were answered after %v\n", r.Late, r.Window)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func perApp(d time.Duration, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(d.Microseconds()) / float64(n)
}

// udpDrops returns the drop counter of the UDP socket bound to a (Linux: /proc/net/udp):
// datagrams the kernel discarded because the socket's receive buffer was full.
func udpDrops(a netip.AddrPort) (int64, bool) {
	f, err := os.Open("/proc/net/udp")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	ip := a.Addr().As4()
	// The address is the 32-bit word in host (little-endian) order, in hex.
	want := fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], a.Port())
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := bytes.Fields(sc.Bytes())
		if len(fields) < 13 || string(fields[1]) != want {
			continue
		}
		n, err := strconv.ParseInt(string(fields[len(fields)-1]), 10, 64)
		return n, err == nil
	}
	return 0, false
}
