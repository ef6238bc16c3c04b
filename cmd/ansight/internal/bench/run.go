package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ansight-go/ansight/examples/notes"
	"github.com/ansight-go/ansight/host/control"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// Options sizes a run. DefaultOptions and QuickOptions are the two sizes the CLI offers;
// tests use smaller ones.
type Options struct {
	// Tool is the small read tool of the call and batch measurements, called with {}.
	Tool string `json:"tool"`
	// Callers is the number of concurrent callers of the throughput measurement (1..64).
	Callers int `json:"callers"`
	// Calls is the number of calls per round, for each call measurement.
	Calls int `json:"calls"`
	// Rounds is how many times each measurement alternates with its baseline; the median
	// round is reported.
	Rounds int `json:"rounds"`
	// ToolCounts are the numbers of synthetic tools of the catalog measurements (in-process
	// runs only).
	ToolCounts []int `json:"toolCounts"`
	// Queries is the number of catalog queries of each form per round; the unchanged
	// answer's rounds, as cheap as calls, have at least Calls/10.
	Queries int `json:"queries"`
	// LargeResultBytes is the size of the large result (data.large_result); LargeResults the
	// number of calls per round.
	LargeResultBytes int `json:"largeResultBytes"`
	LargeResults     int `json:"largeResults"`
	// ArtifactBytes is the size of the artifact (files.generate); memory is compared with a
	// transfer of an eighth of it.
	ArtifactBytes int64 `json:"artifactBytes"`

	// Dir is where scratch files go (artifacts, the baseline's stream); a temporary
	// directory under os.TempDir when empty. It is emptied of what the run wrote.
	Dir string `json:"-"`
	// Progress, when set, is told which measurement starts.
	Progress func(measurement string) `json:"-"`
}

// DefaultTool is the demo app's small read tool.
const DefaultTool = "app.get_state"

// DefaultOptions is a full run: about half a minute on a 2-core machine.
func DefaultOptions() Options {
	return Options{Tool: DefaultTool, Callers: 8, Calls: 30000, Rounds: 7, ToolCounts: []int{100, 1000, 10000},
		Queries: 20, LargeResultBytes: 1 << 20, LargeResults: 20, ArtifactBytes: 64 << 20}
}

// QuickOptions is a run of about two minutes (longer on a busy machine) with every
// measurement at its full size but fewer repetitions.
func QuickOptions() Options {
	return Options{Tool: DefaultTool, Callers: 8, Calls: 10000, Rounds: 7, ToolCounts: []int{100, 1000, 10000},
		Queries: 20, LargeResultBytes: 1 << 20, LargeResults: 5, ArtifactBytes: 64 << 20}
}

func (o *Options) check() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.Tool == "" {
		bad("a tool to call is required")
	}
	if o.Callers < 1 || o.Callers > 64 {
		bad("callers must be 1..64, not %d", o.Callers)
	}
	if o.Calls < 1 || o.Calls > 10_000_000 {
		bad("calls must be 1..10000000, not %d", o.Calls)
	}
	if o.Rounds < 1 || o.Rounds > 100 {
		bad("rounds must be 1..100, not %d", o.Rounds)
	}
	for _, n := range o.ToolCounts {
		if n < 1 || n > notes.MaxSyntheticTools {
			bad("tool counts must be 1..%d, not %d", notes.MaxSyntheticTools, n)
		}
	}
	if o.Queries < 1 || o.Queries > 100_000 {
		bad("queries must be 1..100000, not %d", o.Queries)
	}
	if o.LargeResultBytes < 1024 || o.LargeResultBytes > 32<<20 {
		bad("largeResultBytes must be 1024..32 MiB, not %d", o.LargeResultBytes)
	}
	if o.LargeResults < 1 || o.LargeResults > 10_000 {
		bad("largeResults must be 1..10000, not %d", o.LargeResults)
	}
	if o.ArtifactBytes < 8 || o.ArtifactBytes > 16<<30 {
		bad("artifactBytes must be 8..16 GiB, not %d", o.ArtifactBytes)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

func (o *Options) progress(m string) {
	if o.Progress != nil {
		o.Progress(m)
	}
}

// run holds what every measurement shares.
type run struct {
	opts   Options
	report *Report
	floor  *floor      // the floor: the exact bytes echoed by coder/websocket, no allocation
	echo   *echoClient // the older echo of the same sizes over package transport
	// tap captures the floor's bytes from the local host; nil through the control API,
	// where the floor's bytes are written with the protocol's codec instead.
	tap *tap
	// viaControl: figures include the control API's hop; targets do not apply.
	viaControl bool
	// local: the app runs in this process, so its heap is measurable.
	local bool
	// api is the host API of the measured session (apiSession): the local host's
	// in-process backend, or the resident host's control API.
	api        hostapi.Backend
	apiSession string
}

// RunLocal measures the demo app in this process: a host on loopback ports, demo apps
// connected to it over UDP enrollment and WebSocket, calls through the host's protocol
// client. Every measurement runs.
func RunLocal(ctx context.Context, opts Options) (*Report, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	return withScratch(ctx, opts, "demo app in process (host and app over loopback WebSocket, calls through host/tools)",
		func(r *run, dir string) error {
			h, err := startLocalHost(ctx, dir)
			if err != nil {
				return err
			}
			defer h.close()
			r.local, r.tap = true, h.tap
			d, err := h.connectDemo(ctx, "com.ansight.bench", 0)
			if err != nil {
				return err
			}
			defer d.close()
			r.api, r.apiSession = control.New(h.srv, control.Options{}), d.sessionID
			if err := r.measureSession(ctx, d); err != nil {
				return err
			}
			return r.catalogs(ctx, h)
		})
}

// RunSession measures a session of a resident host through its control API. The figures
// include the control API's hop (HTTP over a Unix socket and the host process), so targets
// do not apply; catalog measurements, which need the protocol client in process, are
// skipped, as are measurements whose tool the app does not offer.
func RunSession(ctx context.Context, b hostapi.Backend, sessionID string, opts Options) (*Report, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	s, err := b.Session(ctx, sessionID)
	if err != nil {
		return nil, fmt.Errorf("bench: session %s: %w", sessionID, err)
	}
	subject := fmt.Sprintf("session %s (app %s) through the host's control API", s.ID, s.AppID)
	return withScratch(ctx, opts, subject, func(r *run, dir string) error {
		r.viaControl = true
		r.api, r.apiSession = b, s.ID
		if err := r.measureSession(ctx, &controlSession{backend: b, sessionID: s.ID}); err != nil {
			return err
		}
		r.report.skip("catalog", "needs the protocol client in this process; run without --session")
		return nil
	})
}

// withScratch sets up the report, the scratch directory and the baseline, then runs body.
func withScratch(ctx context.Context, opts Options, subject string, body func(r *run, dir string) error) (*Report, error) {
	start := time.Now()
	dir, err := os.MkdirTemp(opts.Dir, "ansight-bench-")
	if err != nil {
		return nil, fmt.Errorf("bench: scratch directory: %w", err)
	}
	defer os.RemoveAll(dir)
	base, err := startBaseline(dir)
	if err != nil {
		return nil, err
	}
	defer base.close()
	echo, err := base.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer echo.close()
	fl, err := startFloor(ctx)
	if err != nil {
		return nil, err
	}
	defer fl.close()
	r := &run{opts: opts, echo: echo, floor: fl, report: &Report{Schema: Schema, Subject: subject, Machine: thisMachine(), Options: opts, StartedAt: start.UTC()}}
	used := sampleUsage()
	if err := body(r, dir); err != nil {
		return nil, err
	}
	r.report.DurationMS = time.Since(start).Milliseconds()
	r.report.Load = machineLoad(until(used, sampleUsage()))
	return r.report, nil
}

// measureSession runs the measurements that need only a session: calls, batch, large
// result, artifact.
func (r *run) measureSession(ctx context.Context, s session) error {
	steps := []struct {
		name, tool string
		measure    func(context.Context, session) error
	}{
		{"calls", r.opts.Tool, r.calls},
		{"batch", r.opts.Tool, r.batch},
		{"payload", largeResultTool, r.largeResult},
		{"artifact", artifactTool, r.artifact},
		{"ui", uiTool, r.ui},
		{"mcp", r.opts.Tool, r.mcp},
	}
	for _, st := range steps {
		ok, err := s.hasTool(ctx, st.tool)
		if err != nil {
			return err
		}
		if !ok {
			r.report.skip(st.name, "the app offers no executable tool %s", st.tool)
			continue
		}
		r.opts.progress(st.name)
		if err := st.measure(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", st.name, err)
		}
	}
	return nil
}

// target returns t, or nil when targets do not apply to this run.
func (r *run) target(op string, ratio float64) *Target {
	if r.viaControl {
		return nil
	}
	return &Target{Op: op, Ratio: ratio}
}

// exchange returns the floor's exchange of one request and its answer: captured from op
// when the host is local, otherwise written with the protocol's codec from the request's
// payload and the answer's result (as messageSizes does).
func (r *run) exchange(ctx context.Context, op func(context.Context) error, sessionID, reqType, respType string, payload any, result []byte) (*exchange, error) {
	if r.tap != nil {
		return r.tap.exchangeOf(ctx, op)
	}
	return synthExchange(sessionID, reqType, respType, payload, result)
}

// messageSizes returns the sizes of a request message carrying payload (as the host's
// client writes it) and of the response carrying result (as an app writes it, compressed
// when the codec would compress it).
func messageSizes(sessionID, reqType, respType string, payload any, result []byte) (req, resp int, err error) {
	body, err := wire.Marshal(payload)
	if err != nil {
		return 0, 0, err
	}
	id := "0123456789abcdef0123456789abcdef"
	now := time.Now().UTC()
	reqEnv := wire.Envelope{Type: reqType, ID: id, SessionID: sessionID, SentAt: now, Capability: wire.CapabilityToolExec, Payload: body}
	reqMsg, err := wire.AppendEnvelope(nil, &reqEnv)
	if err != nil {
		return 0, 0, err
	}
	wrapped, err := wire.EncodePayload(result)
	if err != nil {
		return 0, 0, err
	}
	respMsg, err := wire.AppendEnvelope(nil, wire.NewResponse(&reqEnv, respType, wrapped, now))
	if err != nil {
		return 0, 0, err
	}
	return len(reqMsg), len(respMsg), nil
}
