package reliability

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/app/ui"
	"github.com/ansight-go/ansight/cmd/ansight/internal/childproc"
	"github.com/ansight-go/ansight/cmd/ansight/internal/usage"
	"github.com/ansight-go/ansight/examples/notes"
	"github.com/ansight-go/ansight/recording"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// RunRecordLoad is issue 15's recording load with the senders in a child process of this
// executable: Sessions apps each stream Messages telemetry messages a second (the official
// SDKs' shapes, in turn) and Frames ASJP frames a second (the demo's screen) while one
// caller calls a tool on the sessions in turn, Calls a second. The host records with the
// recorder's default budgets; rounds alternate between recording off and on — the same
// host, apps and telemetry, the recorder told nothing while off — so that the call latency
// ratio is the recorder's own, measured in one run. The apps are in another process so that
// the host's CPU time is its own and the senders' work does not queue behind the host's
// goroutines as it did in one process.
func RunRecordLoad(ctx context.Context, opts RecordLoadOptions) (*RecordLoadReport, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	dir := opts.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "ansight-record-load-*"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
	}
	rec, err := recording.Open(recording.Options{Dir: filepath.Join(dir, "recordings"), MinFrameInterval: -1, Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	defer rec.Close()
	sw := &switchRecorder{rec: rec}
	hopts := hostOptions(LoadOptions{Sessions: opts.Sessions, InFlight: 1, CallTimeout: DefaultCallTimeout, Logger: opts.Logger})
	hopts.Recorder = sw
	srv, err := startHost(ctx, hopts)
	if err != nil {
		return nil, err
	}
	defer srv.Close()

	opts.Progress(fmt.Sprintf("connecting %d sessions (apps in a child process)", opts.Sessions))
	f, err := startSenders(int(srv.DiscoveryAddr().Port()), filepath.Join(dir, "apps"), opts)
	if err != nil {
		return nil, err
	}
	defer f.stop()
	sessions, err := awaitConnected(ctx, srv, f, opts.Sessions, DefaultConnectTimeout)
	if err != nil {
		return nil, err
	}
	rep := &RecordLoadReport{Sessions: opts.Sessions, Messages: opts.Messages, Frames: opts.Frames, Calls: opts.Calls,
		Duration: usage.Millis(opts.Duration), Rounds: opts.Rounds}

	opts.Progress("telemetry starts")
	if err := f.child.Send(senderCommand{Send: true}); err != nil {
		return nil, err
	}
	// The senders reach their pace and the recorder's pools their size.
	warm := min(5*time.Second, max(time.Second, opts.Duration/10))
	sw.on.Store(opts.AlwaysOn)
	callN(ctx, sessions, opts.Calls, int(warm.Seconds()*float64(opts.Calls)))
	sentBefore := f.sentNow()
	roundsStart := time.Now()

	round := opts.Duration / time.Duration(opts.Rounds)
	// Every round makes the same number of calls, so that each side's p99 weighs its
	// rounds alike.
	perRound := max(1, int(round.Seconds()*float64(opts.Calls)))
	var lat [2][]time.Duration
	var cpu [2]time.Duration
	var walls [2]time.Duration
	var ratios []float64
	before := rec.Usage()
	start := usage.Now()
	appsStart := f.cpuNow()
	for i := range opts.Rounds {
		on := i%2 == 1 || opts.AlwaysOn
		opts.Progress(fmt.Sprintf("round %d of %d: recording %s", i+1, opts.Rounds, map[bool]string{false: "off", true: "on"}[on]))
		sw.on.Store(on)
		c0, t0 := usage.ProcessCPU(), time.Now()
		l, failed := callN(ctx, sessions, opts.Calls, perRound)
		k := map[bool]int{false: 0, true: 1}[on]
		cpu[k] += usage.ProcessCPU() - c0
		walls[k] += time.Since(t0)
		rep.Failed += failed
		lat[k] = append(lat[k], l...)
		if on && len(lat[0]) > 0 { // this round against the off round before it
			ratios = append(ratios, ratioOf(quantileOf(l, 0.99), quantileOf(lastRound(lat[0], len(l)), 0.99)))
		}
	}
	rep.Pace = float64(f.sentNow()-sentBefore) / (time.Since(roundsStart).Seconds() * float64(opts.Sessions*(opts.Messages+opts.Frames)))
	sw.on.Store(false)
	appsCPU := f.cpuNow() - appsStart
	machine := start.Since(appsCPU)
	if err := f.child.Send(senderCommand{Send: false}); err != nil {
		return nil, err
	}
	flushStart := time.Now()
	if err := rec.Flush(ctx); err != nil {
		return nil, err
	}
	rep.Flush = usage.Millis(time.Since(flushStart))
	after := rec.Usage()
	sent := f.final()
	rep.Sent, rep.SentFrames, rep.WriteErrors = sent.Sent, sent.Frames, sent.WriteErrors
	rep.Records = after.Records - before.Records + after.Evicted - before.Evicted
	rep.Dropped = after.Dropped - before.Dropped
	rep.Thinned = after.Thinned - before.Thinned
	rep.Evicted = after.Evicted - before.Evicted
	rep.DiskBytes, rep.BudgetBytes = after.DiskBytes, after.MaxBytes
	rep.Off = latencyOf(lat[0], cpu[0], walls[0])
	rep.On = latencyOf(lat[1], cpu[1], walls[1])
	rep.P99Ratio = ratioOf(rep.On.P99.D(), rep.Off.P99.D())
	if len(ratios) > 0 {
		rep.P99RatioRange = [2]float64{slices.Min(ratios), slices.Max(ratios)}
		rep.P99RatioMedian = median(ratios)
		rep.P99Rounds = ratios
	}
	rep.AppsCPU = usage.Millis(appsCPU)
	rep.Machine = machine
	rep.RunErrors = f.runErrors()
	return rep, nil
}

// RecordLoadOptions sizes RunRecordLoad; zero values take the defaults (issue 15's load).
type RecordLoadOptions struct {
	// Sessions (50) each send Messages telemetry messages (50) and Frames frames (10) a
	// second, while Calls tool calls a second (200) go to the sessions in turn, one at a
	// time. The calls are the probe, not the load: 200 a second give each side of a 60 s
	// run 6,000 calls, so that its p99 is the 60th slowest call, not the 15th as with
	// issue 15's 50 a second, and one stall of another process moves it less.
	Sessions, Messages, Frames, Calls int
	// Duration is the time measured (60 s), in Rounds rounds (12) alternating between
	// recording off and on, after a few seconds of warm-up: short rounds spread what other
	// processes do over both sides.
	Duration time.Duration
	Rounds   int
	// AlwaysOn records in every round (the capacity search: RunRecordCapacity); Off
	// is then empty.
	AlwaysOn bool
	// Dir holds the apps' identities and the recordings; a temporary directory when empty.
	Dir      string
	Logger   *slog.Logger
	Progress func(phase string)
}

func (o RecordLoadOptions) withDefaults() (RecordLoadOptions, error) {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.Sessions, 50)
	def(&o.Messages, 50)
	def(&o.Frames, 10)
	def(&o.Calls, 200)
	def(&o.Rounds, 12)
	if o.Duration <= 0 {
		o.Duration = time.Minute
	}
	if o.Rounds%2 == 1 {
		o.Rounds++ // as many rounds on as off
	}
	if o.Sessions > MaxRecordSessions || o.Messages > 1000 || o.Frames > 60 || o.Calls > 10000 {
		return o, fmt.Errorf("reliability: at most %d sessions, 1000 messages and 60 frames a second each, 10000 calls a second", MaxRecordSessions)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	return o, nil
}

// RecordLoadReport is what RunRecordLoad measured.
type RecordLoadReport struct {
	Sessions int `json:"sessions"`
	// Messages and Frames are per session and second; Calls per second in all.
	Messages int          `json:"messagesPerSecond"`
	Frames   int          `json:"framesPerSecond"`
	Calls    int          `json:"callsPerSecond"`
	Duration usage.Millis `json:"durationMs"`
	Rounds   int          `json:"rounds"`
	// Sent, SentFrames and WriteErrors are the senders' counts over the whole run.
	Sent        int64 `json:"sent"`
	SentFrames  int64 `json:"sentFrames"`
	WriteErrors int64 `json:"writeErrors"`
	// Pace is what the senders sent over the rounds (messages and frames) over what the
	// load asks: below 1, the machine could not even send the load.
	Pace float64 `json:"pace"`
	// What the recorder did in the measured rounds: records written (evicted ones
	// included), telemetry dropped for a full queue, frames thinned, records evicted for
	// the budget; disk used and the budget; the time to write what was queued at the end.
	Records     int64        `json:"records"`
	Dropped     int64        `json:"dropped"`
	Thinned     int64        `json:"thinned"`
	Evicted     int64        `json:"evicted"`
	DiskBytes   int64        `json:"diskBytes"`
	BudgetBytes int64        `json:"budgetBytes"`
	Flush       usage.Millis `json:"flushMs"`
	// Off and On are the calls with recording off and on; P99Ratio is On's p99 over Off's,
	// P99RatioRange the lowest and highest of each on round's p99 over the off round
	// before it.
	Off RecordLatency `json:"off"`
	On  RecordLatency `json:"on"`
	// P99RatioMedian is the median of those rounds' ratios, P99Rounds each of them.
	P99Ratio       float64    `json:"p99Ratio"`
	P99RatioRange  [2]float64 `json:"p99RatioRange"`
	P99RatioMedian float64    `json:"p99RatioMedian"`
	P99Rounds      []float64  `json:"p99Rounds,omitempty"`
	Failed         int64      `json:"failedCalls"`
	// AppsCPU is the senders' process's CPU time over the rounds; Machine the host
	// process's with the rest of the machine's load.
	AppsCPU   usage.Millis `json:"appsCpuMs"`
	Machine   usage.Span   `json:"machine"`
	RunErrors []string     `json:"runErrors,omitempty"`
}

// RecordLatency is the calls of one kind of round.
type RecordLatency struct {
	Calls int          `json:"calls"`
	P50   usage.Millis `json:"p50Ms"`
	P99   usage.Millis `json:"p99Ms"`
	// P999 is the 99.9th percentile (the 6th slowest of 6,000 calls) and Max the slowest:
	// what a stall of the writer under the recorder's lock would show first.
	P999 usage.Millis `json:"p999Ms"`
	Max  usage.Millis `json:"maxMs"`
	// Cores is the host process's CPU time over those rounds' wall time.
	Cores float64 `json:"cores"`
}

// Check returns the run's failures: telemetry dropped, writes failed, calls failed, apps
// that stopped.
func (r *RecordLoadReport) Check() error {
	var errs []error
	if r.Dropped > 0 {
		errs = append(errs, fmt.Errorf("%d telemetry messages dropped", r.Dropped))
	}
	if r.WriteErrors > 0 {
		errs = append(errs, fmt.Errorf("%d sends failed", r.WriteErrors))
	}
	if r.Failed > 0 {
		errs = append(errs, fmt.Errorf("%d calls failed", r.Failed))
	}
	for _, e := range r.RunErrors {
		errs = append(errs, errors.New(e))
	}
	return shortfalls(errs)
}

// WriteText writes the report for people.
func (r *RecordLoadReport) WriteText(out io.Writer) error {
	w := bufio.NewWriter(out)
	fmt.Fprintf(w, "recording load: %d sessions, each %d telemetry messages and %d frames a second; %d calls a second; %v in %d rounds, recording off and on in turn\n",
		r.Sessions, r.Messages, r.Frames, r.Calls, r.Duration, r.Rounds)
	fmt.Fprintf(w, "  sent        %d messages, %d frames (whole run), %d send errors; %.3f of the pace asked in the rounds\n", r.Sent, r.SentFrames, r.WriteErrors, r.Pace)
	fmt.Fprintf(w, "  recorded    %d records, %d dropped, %d frames thinned, %d evicted; disk %.1f MiB of a %.0f MiB budget; queue written %v after\n",
		r.Records, r.Dropped, r.Thinned, r.Evicted, float64(r.DiskBytes)/(1<<20), float64(r.BudgetBytes)/(1<<20), r.Flush)
	if r.Off.Calls > 0 {
		fmt.Fprintf(w, "  calls off   %d, p50 %v, p99 %v, p99.9 %v, max %v; host %.2f cores\n", r.Off.Calls, r.Off.P50, r.Off.P99, r.Off.P999, r.Off.Max, r.Off.Cores)
	}
	fmt.Fprintf(w, "  calls on    %d, p50 %v, p99 %v, p99.9 %v, max %v; host %.2f cores\n", r.On.Calls, r.On.P50, r.On.P99, r.On.P999, r.On.Max, r.On.Cores)
	if r.Off.Calls > 0 {
		fmt.Fprintf(w, "  on/off      p99 %.2f× (each on round against the off round before it: median %.2f×, %s), p50 %.2f×; %d calls failed\n",
			r.P99Ratio, r.P99RatioMedian, ratioList(r.P99Rounds), ratioOf(r.On.P50.D(), r.Off.P50.D()), r.Failed)
	} else {
		fmt.Fprintf(w, "  calls       %d failed\n", r.Failed)
	}
	fmt.Fprintf(w, "  CPU         host %v, senders %v; %s\n", r.Machine.Process, r.AppsCPU, r.Machine.Conditions())
	for _, e := range r.RunErrors {
		fmt.Fprintf(w, "  error       %s\n", e)
	}
	return w.Flush()
}

// switchRecorder hands the host's messages to the recorder while on. Session changes,
// kept files and the ids it holds always go through: they are the recording's index, and
// off must mean "no telemetry recorded", not "a recorder that lost track".
type switchRecorder struct {
	rec *recording.Recorder
	on  atomic.Bool
}

func (s *switchRecorder) RecordMessage(id string, typ transport.MessageType, data []byte, at time.Time) {
	if s.on.Load() {
		s.rec.RecordMessage(id, typ, data, at)
	}
}

func (s *switchRecorder) RecordControl(id, action string, payload []byte, ok bool, message string, at time.Time) {
	if s.on.Load() {
		s.rec.RecordControl(id, action, payload, ok, message, at)
	}
}

func (s *switchRecorder) RecordTraffic(ev wire.TrafficEvent) {
	if s.on.Load() {
		s.rec.RecordTraffic(ev)
	}
}

func (s *switchRecorder) RecordSession(id, event string, at time.Time, info []byte) {
	s.rec.RecordSession(id, event, at, info)
}

func (s *switchRecorder) RecordKept(id, kind, summary string, at time.Time, meta []byte, path string) {
	s.rec.RecordKept(id, kind, summary, at, meta, path)
}

func (s *switchRecorder) Recorded(id string) bool { return s.rec.Recorded(id) }

// callN makes n calls of load.echo on the sessions in turn, rate a second and one at a
// time (a tick missed while a call is slow is skipped), and returns every call's latency
// and how many failed.
func callN(ctx context.Context, sessions []loadSession, rate, n int) ([]time.Duration, int64) {
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	lat := make([]time.Duration, 0, n)
	var failed int64
	for i := range n {
		select {
		case <-ctx.Done():
			return lat, failed + int64(n-i)
		case <-tick.C:
		}
		s := sessions[i%len(sessions)]
		args := jsontext.Value(fmt.Sprintf(`{"nonce":"n%d"}`, i))
		t0 := time.Now()
		_, err := s.sess.Tools().Call(ctx, wire.Call{ToolID: toolEcho, Arguments: args})
		if err != nil {
			failed++
			continue
		}
		lat = append(lat, time.Since(t0))
	}
	return lat, failed
}

func latencyOf(l []time.Duration, cpu, wall time.Duration) RecordLatency {
	out := RecordLatency{Calls: len(l), P50: usage.Millis(quantileOf(l, 0.5)), P99: usage.Millis(quantileOf(l, 0.99)),
		P999: usage.Millis(quantileOf(l, 0.999)), Max: usage.Millis(quantileOf(l, 1))}
	if wall > 0 {
		out.Cores = cpu.Seconds() / wall.Seconds()
	}
	return out
}

// lastRound is the last n latencies of l (the off round just before an on round).
func lastRound(l []time.Duration, n int) []time.Duration { return l[max(0, len(l)-n):] }

func quantileOf(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ratioList is "rounds 1.02, 0.97, …×".
func ratioList(v []float64) string {
	var b strings.Builder
	b.WriteString("rounds ")
	for i, x := range v {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%.2f", x)
	}
	b.WriteString("×")
	return b.String()
}

func ratioOf(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// The senders' child process (role recordSendersRole): it connects the apps, sends
// telemetry and frames from every one while told to, and reports its counts and CPU time
// every quarter of a second; closing its input closes the apps, and its last report is
// final.
const recordSendersRole = "reliability-record-senders"

func init() { childproc.Register(recordSendersRole, runSenders) }

type sendersConfig struct {
	Port, Sessions, Messages, Frames int
	Dir                              string
}

// senderCommand starts (Send) or stops the telemetry.
type senderCommand struct {
	Send bool `json:"send"`
}

type sendersStatus struct {
	Connected   int          `json:"connected"`
	Sent        int64        `json:"sent"`
	Frames      int64        `json:"frames"`
	WriteErrors int64        `json:"writeErrors"`
	Errors      []string     `json:"errors,omitempty"`
	CPU         usage.Millis `json:"cpuMs"`
	Final       bool         `json:"final,omitempty"`
}

// officialTelemetry is one message of each kind the official SDKs send (a copy of the
// recording package's fixture, recording/testdata/official-telemetry.jsonl, without
// CLIENT_DONE, which ends a session).
//
//go:embed telemetry.jsonl
var officialTelemetry []byte

func runSenders(ctx context.Context, p *childproc.Parent) error {
	var cfg sendersConfig
	if err := p.Receive(ctx, &cfg); err != nil {
		return err
	}
	lines := bytes.Split(bytes.TrimSpace(officialTelemetry), []byte("\n"))
	img, w, h, err := ui.Frame(ctx, notes.New(notes.Options{}), 360, 60)
	if err != nil {
		return err
	}
	var (
		mu                  sync.Mutex
		apps                []*connect.Session
		errs                []string
		sent, frames, wErrs atomic.Int64
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err.Error())
		mu.Unlock()
	}
	var dials sync.WaitGroup
	for i := range cfg.Sessions {
		dials.Go(func() {
			a, err := newLoadApp(appTag(i), slog.New(slog.DiscardHandler))
			if err != nil {
				fail(err)
				return
			}
			local := connect.Local{HostAddress: "127.0.0.1", DiscoveryPorts: []int{cfg.Port}, EnrollTimeout: 5 * time.Second}
			s, err := connect.Dial(ctx, a, local, connect.Options{AppID: appID(i), AppName: "load " + appTag(i), AppVersion: "1.0",
				DeviceName: "load-" + appTag(i), StateDir: filepath.Join(cfg.Dir, appTag(i))})
			if err != nil {
				fail(fmt.Errorf("%s: %w", appTag(i), err))
				return
			}
			mu.Lock()
			apps = append(apps, s)
			mu.Unlock()
		})
	}
	dials.Wait()
	defer func() {
		for _, s := range apps {
			s.Close()
		}
	}()
	cmds := make(chan senderCommand)
	go func() {
		defer close(cmds)
		for {
			var c senderCommand
			if p.Receive(ctx, &c) != nil {
				return
			}
			cmds <- c
		}
	}()
	var stopSending context.CancelFunc = func() {}
	var senders sync.WaitGroup
	start := func() {
		sctx, cancel := context.WithCancel(ctx)
		stopSending = cancel
		for i, s := range apps {
			senders.Go(func() { // telemetry: the messages in turn, each app phased
				every(sctx, time.Second/time.Duration(max(cfg.Messages, 1)), i, len(apps), cfg.Messages > 0, func(n int, _ time.Time) {
					// A write sent with a context that can end tears the connection down when it
					// ends mid-message: the senders stop between writes instead.
					if s.Send(context.WithoutCancel(sctx), transport.MessageText, lines[(n+i)%len(lines)]) != nil {
						wErrs.Add(1)
						return
					}
					sent.Add(1)
				})
			})
			senders.Go(func() { // frames
				var buf []byte
				every(sctx, time.Second/time.Duration(max(cfg.Frames, 1)), i, len(apps), cfg.Frames > 0, func(_ int, now time.Time) {
					buf, _ = wire.AppendASJP(buf[:0], wire.ASJPFrame{Format: 1, Quality: 60, CapturedAt: now, Width: int32(w), Height: int32(h), JPEG: img})
					if s.Send(context.WithoutCancel(sctx), transport.MessageBinary, buf) != nil {
						wErrs.Add(1)
						return
					}
					frames.Add(1)
				})
			})
		}
	}
	stop := func() {
		stopSending()
		senders.Wait()
	}
	status := func() sendersStatus {
		mu.Lock()
		defer mu.Unlock()
		st := sendersStatus{Connected: len(apps), Sent: sent.Load(), Frames: frames.Load(), WriteErrors: wErrs.Load(),
			Errors: slices.Clone(errs), CPU: usage.Millis(usage.ProcessCPU())}
		errs = errs[:0]
		return st
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case c, open := <-cmds:
			switch {
			case !open:
				stop()
				st := status()
				st.Final = true
				return p.Send(st)
			case c.Send:
				start()
			default:
				stop()
			}
		case <-tick.C:
			if err := p.Send(status()); err != nil {
				return err
			}
		}
	}
}

// every calls f every period from the i-th of n points spread over the period (devices do
// not send in step) until ctx ends; f gets a count and the tick's time.
func every(ctx context.Context, period time.Duration, i, n int, enabled bool, f func(int, time.Time)) {
	if !enabled {
		return
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(period * time.Duration(i) / time.Duration(max(n, 1))):
	}
	tick := time.NewTicker(period)
	defer tick.Stop()
	for k := 0; ; k++ {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			if ctx.Err() != nil {
				return
			}
			f(k, now)
		}
	}
}

// senders is the parent's view of the child.
type senders struct {
	child *childproc.Child
	done  chan struct{}

	mu   sync.Mutex
	last sendersStatus
	errs []string
}

func startSenders(port int, dir string, opts RecordLoadOptions) (*senders, error) {
	c, err := childproc.Start(recordSendersRole, sendersConfig{Port: port, Sessions: opts.Sessions, Messages: opts.Messages, Frames: opts.Frames, Dir: dir})
	if err != nil {
		return nil, err
	}
	f := &senders{child: c, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		for {
			var st sendersStatus
			if err := c.Receive(&st); err != nil {
				f.mu.Lock()
				if !f.last.Final {
					f.errs = append(f.errs, "the senders' process: "+err.Error())
				}
				f.mu.Unlock()
				return
			}
			f.mu.Lock()
			f.errs = append(f.errs, st.Errors...)
			f.last = st
			f.mu.Unlock()
			if st.Final {
				return
			}
		}
	}()
	return f, nil
}

func (f *senders) runErrors() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.errs)
}

func (f *senders) reconnects() int { return 0 }

// cpu is the child's CPU time at its last report (a quarter of a second old at most).
func (f *senders) cpu() time.Duration { return f.cpuNow() }

// sentNow is what the child had sent, messages and frames, at its last report.
func (f *senders) sentNow() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last.Sent + f.last.Frames
}

func (f *senders) cpuNow() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last.CPU.D()
}

// final closes the child's input and returns its last report.
func (f *senders) final() sendersStatus {
	f.child.CloseInput()
	select {
	case <-f.done:
	case <-time.After(time.Minute):
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

func (f *senders) stop() {
	f.child.CloseInput()
	f.child.Wait(10 * time.Second)
}
