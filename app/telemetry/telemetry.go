package telemetry

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire/session"
)

// Defaults of Options.
const (
	DefaultMaxPendingLogs     = 1000
	DefaultMaxPendingRequests = 500
	DefaultLogTail            = 1000
	DefaultMetricsInterval    = 2 * time.Second
	// DefaultFrameInterval, DefaultFrameQuality and DefaultFrameMaxWidth are the official
	// SDKs' screen stream defaults, used where the host's policy says nothing.
	DefaultFrameInterval = 2 * time.Second
	DefaultFrameQuality  = 60
	DefaultFrameMaxWidth = 720
)

// Options configures a Telemetry. The zero value forwards logs and requests and samples
// runtime metrics; it streams no screen.
type Options struct {
	// MaxPendingLogs and MaxPendingRequests bound the log lines and request records
	// waiting to be sent (DefaultMaxPendingLogs, DefaultMaxPendingRequests); beyond, new
	// ones are dropped and counted.
	MaxPendingLogs     int
	MaxPendingRequests int
	// LogTail is how many recent log lines LogTail keeps (DefaultLogTail).
	LogTail int
	// MetricsInterval is the sampling period of the runtime metrics
	// (DefaultMetricsInterval); negative disables them.
	MetricsInterval time.Duration
	// Frames, when set, renders the frames of the live screen stream when the host asks for
	// app capture; ui.FrameSource makes one of a ui.Screen.
	Frames FrameSource
	// ControlTimeout bounds the wait for the host's answer to one client.log (15 s, the
	// official SDKs' value).
	ControlTimeout time.Duration
}

// Link is a session's connection as Telemetry uses it; connect's session provides it.
type Link interface {
	// Send writes one message; it may block until the connection takes it or ctx ends.
	// connect's session writes it after the tool responses and control requests waiting
	// to be written, so that telemetry never holds up a tool call.
	Send(ctx context.Context, typ transport.MessageType, data []byte) error
	// Control sends a control request and waits for the host's answer.
	Control(ctx context.Context, action string, payload any) (ok bool, message string, err error)
}

// Telemetry collects an app's logs, HTTP requests, runtime metrics and screen and sends
// them on the attached session. Its methods are safe for concurrent use.
type Telemetry struct {
	opts     Options
	logs     chan string
	requests chan []byte
	taps     chan []byte
	tail     tail

	logsSent, logsDropped, requestsSent, requestsDropped, samplesSent, framesSent atomic.Int64
	tapsSent, tapsDropped, tapsMasked                                             atomic.Int64

	mu     sync.Mutex
	detach func()
}

// New returns a Telemetry; nothing is sent until a session attaches it.
func New(opts Options) *Telemetry {
	if opts.MaxPendingLogs <= 0 {
		opts.MaxPendingLogs = DefaultMaxPendingLogs
	}
	if opts.MaxPendingRequests <= 0 {
		opts.MaxPendingRequests = DefaultMaxPendingRequests
	}
	if opts.LogTail <= 0 {
		opts.LogTail = DefaultLogTail
	}
	if opts.MetricsInterval == 0 {
		opts.MetricsInterval = DefaultMetricsInterval
	}
	if opts.ControlTimeout <= 0 {
		opts.ControlTimeout = 15 * time.Second
	}
	return &Telemetry{opts: opts, logs: make(chan string, opts.MaxPendingLogs),
		requests: make(chan []byte, opts.MaxPendingRequests), taps: make(chan []byte, maxPendingTaps), tail: tail{max: opts.LogTail}}
}

// Stats counts what was sent and dropped since New.
type Stats struct {
	LogsSent, LogsDropped         int64
	RequestsSent, RequestsDropped int64
	SamplesSent, FramesSent       int64
	// TapsSent counts the tap messages sent (a tree, a touch), TapsDropped those lost to a
	// full queue or a failed write, TapsMasked the taps on secure nodes whose touch was
	// not sent.
	TapsSent, TapsDropped, TapsMasked int64
}

// Stats returns the counters.
func (t *Telemetry) Stats() Stats {
	return Stats{LogsSent: t.logsSent.Load(), LogsDropped: t.logsDropped.Load(), RequestsSent: t.requestsSent.Load(),
		RequestsDropped: t.requestsDropped.Load(), SamplesSent: t.samplesSent.Load(), FramesSent: t.framesSent.Load(),
		TapsSent: t.tapsSent.Load(), TapsDropped: t.tapsDropped.Load(), TapsMasked: t.tapsMasked.Load()}
}

// Attach starts sending on link: the queued and future log lines and requests, the
// runtime metrics, and the screen stream when policy asks for app capture (mode "app" or
// empty). It replaces an earlier attachment. The returned function stops it and returns
// once every goroutine it started has.
func (t *Telemetry) Attach(link Link, policy session.JpegCapturePolicy) (detach func()) {
	t.mu.Lock()
	prev := t.detach
	t.detach = nil
	t.mu.Unlock()
	if prev != nil {
		prev()
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	run := func(f func(context.Context, Link)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(ctx, link)
		}()
	}
	run(t.pumpLogs)
	run(t.pumpRequests)
	run(t.pumpTaps)
	if t.opts.MetricsInterval > 0 {
		run(t.sampleMetrics)
	}
	if t.opts.Frames != nil && policy.Mode != session.JpegCaptureHost {
		run(func(ctx context.Context, l Link) { t.streamScreen(ctx, l, policy) })
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			wg.Wait()
		})
	}
	t.mu.Lock()
	t.detach = stop
	t.mu.Unlock()
	return stop
}

// pumpLogs sends queued lines as client.log, one acknowledged request at a time, as the
// official SDKs do. A line the host does not take (no answer, lost connection) is dropped.
func (t *Telemetry) pumpLogs(ctx context.Context, link Link) {
	for {
		select {
		case <-ctx.Done():
			return
		case line := <-t.logs:
			cctx, cancel := context.WithTimeout(ctx, t.opts.ControlTimeout)
			ok, _, err := link.Control(cctx, "client.log", map[string]string{"data": line})
			cancel()
			if err != nil || !ok {
				t.logsDropped.Add(1)
				continue
			}
			t.logsSent.Add(1)
		}
	}
}

// pumpRequests sends queued CLIENT_NETWORK_REQUEST messages.
func (t *Telemetry) pumpRequests(ctx context.Context, link Link) {
	for {
		select {
		case <-ctx.Done():
			return
		case msg := <-t.requests:
			if err := send(ctx, link, transport.MessageText, msg); err != nil {
				t.requestsDropped.Add(1)
				continue
			}
			t.requestsSent.Add(1)
		}
	}
}

// sendTimeout bounds one telemetry write, as the official SDKs' 10 s send timeout.
const sendTimeout = 10 * time.Second

func send(ctx context.Context, link Link, typ transport.MessageType, data []byte) error {
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	return link.Send(ctx, typ, data)
}

// utc formats a time as the SDKs do: UTC, RFC 3339 with milliseconds.
func utc(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
