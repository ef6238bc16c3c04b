package reliability

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ansight-go/ansight/cmd/ansight/internal/usage"
)

// MaxRecordSessions bounds the recording load's sessions: each is a file descriptor at
// each end and, at 20 messages and 2 frames a second, about 0.35 MiB/s of frames; the
// capacity search stops there.
const MaxRecordSessions = 5000

// RecordCapacityOptions sizes RunRecordCapacity; zero values take the defaults.
type RecordCapacityOptions struct {
	// Messages (20) and Frames (2) are what each session sends a second.
	Messages, Frames int
	// Start (50) is the first session count tried, Limit (MaxRecordSessions) the largest.
	Start, Limit int
	// Step (20 s) is how long each count is measured, recording on throughout.
	Step     time.Duration
	Dir      string
	Progress func(phase string)
}

func (o RecordCapacityOptions) withDefaults() (RecordCapacityOptions, error) {
	if o.Messages <= 0 && o.Frames <= 0 {
		o.Messages, o.Frames = 20, 2
	}
	if o.Start <= 0 {
		o.Start = 50
	}
	if o.Limit <= 0 {
		o.Limit = MaxRecordSessions
	}
	if o.Step <= 0 {
		o.Step = 20 * time.Second
	}
	if o.Limit > MaxRecordSessions || o.Start > o.Limit {
		return o, fmt.Errorf("reliability: the capacity search runs from %d to %d sessions: at most %d, from no more than the limit", o.Start, o.Limit, MaxRecordSessions)
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	return o, nil
}

// RunRecordCapacity finds the largest number of sessions, each sending Messages telemetry
// messages and Frames frames a second, that a recording host holds on this machine: for
// each count it runs RunRecordLoad for Step with recording on throughout (a new host,
// recorder and senders' process each time) and judges the step by holds. Counts double
// from Start until one is not held (or Limit is), then bisect to within 5 %
// (searchLargest). The senders run on the same machine: what it holds is the host, the
// recorder and the senders together on its cores.
func RunRecordCapacity(ctx context.Context, opts RecordCapacityOptions) (*RecordCapacityReport, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	rep := &RecordCapacityReport{Messages: opts.Messages, Frames: opts.Frames, Step: usage.Millis(opts.Step)}
	var runErr error
	rep.Largest = searchLargest(opts.Start, opts.Limit, func(n int) bool {
		if runErr != nil {
			return false
		}
		opts.Progress(fmt.Sprintf("step %d: %d sessions for %v", len(rep.Steps)+1, n, opts.Step))
		step := CapacityStep{Sessions: n}
		lr, err := RunRecordLoad(ctx, RecordLoadOptions{Sessions: n, Messages: opts.Messages, Frames: opts.Frames, Calls: 100,
			Duration: opts.Step, Rounds: 2, AlwaysOn: true, Dir: opts.Dir,
			Progress: func(p string) { opts.Progress("  " + p) }})
		if ctx.Err() != nil {
			runErr = ctx.Err()
			return false
		}
		if err != nil {
			step.Error = err.Error()
		} else {
			step.Report = lr
			step.Held, step.Why = holds(lr)
		}
		rep.Steps = append(rep.Steps, step)
		return step.Held
	})
	if runErr != nil {
		return nil, runErr
	}
	rep.Limit = opts.Limit
	return rep, nil
}

// holds judges one step: no telemetry dropped, no send or call failed, the senders kept at
// least 95 % of the pace asked (a machine that cannot even send the load has not shown
// that the host records it), and the queue written within a second of the load's end (a
// writer that falls behind drops later, once its queue is full).
func holds(r *RecordLoadReport) (bool, string) {
	if err := r.Check(); err != nil {
		return false, err.Error()
	}
	if r.Pace < 0.95 {
		return false, fmt.Sprintf("the senders kept %.2f of the pace", r.Pace)
	}
	if r.Flush.D() > time.Second {
		return false, fmt.Sprintf("the queue took %v to write after the load", r.Flush)
	}
	return true, ""
}

// searchLargest returns the largest n in [1, limit] for which held(n), calling held for
// start, 2·start, 4·start… until a count is not held or limit is reached, then bisecting
// between the largest held and the smallest not held until they are less than 5 % (and
// at least 2) apart. It assumes held is monotone; measured steps need not be, so the
// caller reports every step. 0 when not even 1 session holds.
func searchLargest(start, limit int, held func(n int) bool) int {
	lo, hi := 0, 0 // the largest held so far; the smallest not held (0: none yet)
	for n := start; ; n *= 2 {
		n = min(n, limit)
		if !held(n) {
			hi = n
			break
		}
		lo = n
		if n == limit {
			return lo
		}
	}
	for hi-lo > max(1, lo/20) {
		mid := lo + (hi-lo)/2
		if held(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// RecordCapacityReport is what RunRecordCapacity measured.
type RecordCapacityReport struct {
	Messages int          `json:"messagesPerSecond"`
	Frames   int          `json:"framesPerSecond"`
	Step     usage.Millis `json:"stepMs"`
	Limit    int          `json:"limit"`
	// Largest is the largest count held (0: none).
	Largest int            `json:"largest"`
	Steps   []CapacityStep `json:"steps"`
}

// CapacityStep is one count measured.
type CapacityStep struct {
	Sessions int               `json:"sessions"`
	Held     bool              `json:"held"`
	Why      string            `json:"why,omitempty"`   // what was not held
	Error    string            `json:"error,omitempty"` // the step did not run through
	Report   *RecordLoadReport `json:"report,omitempty"`
}

// Check fails when not even the first count held.
func (r *RecordCapacityReport) Check() error {
	if r.Largest == 0 {
		return errors.New("no session count held")
	}
	return nil
}

// WriteText writes the report for people.
func (r *RecordCapacityReport) WriteText(out io.Writer) error {
	w := bufio.NewWriter(out)
	fmt.Fprintf(w, "recording capacity: sessions each sending %d telemetry messages and %d frames a second, recording on, %v a step\n",
		r.Messages, r.Frames, r.Step)
	for _, s := range r.Steps {
		verdict := "held"
		if !s.Held {
			verdict = "NOT held: " + s.Why + s.Error
		}
		if lr := s.Report; lr != nil {
			fmt.Fprintf(w, "  %5d sessions  %s; %d dropped, pace %.3f, queue written %v after; call p50 %v, p99 %v; host %.2f cores, senders %.2f; %s\n",
				s.Sessions, verdict, lr.Dropped, lr.Pace, lr.Flush, lr.On.P50, lr.On.P99, lr.On.Cores,
				lr.AppsCPU.D().Seconds()/lr.Machine.Wall.D().Seconds(), lr.Machine.Conditions())
		} else {
			fmt.Fprintf(w, "  %5d sessions  %s\n", s.Sessions, verdict)
		}
	}
	if r.Largest == r.Limit {
		fmt.Fprintf(w, "  largest held: %d sessions (the limit searched)\n", r.Largest)
	} else {
		fmt.Fprintf(w, "  largest held: %d sessions (%d messages and %d frames a second in all)\n", r.Largest, r.Largest*r.Messages, r.Largest*r.Frames)
	}
	return w.Flush()
}
