package reliability

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/ansight-go/ansight/cmd/ansight/internal/childproc"
	"github.com/ansight-go/ansight/cmd/ansight/internal/usage"
)

// The load's apps in a child process (LoadOptions.AppProcess, role loadFleetRole): the
// child runs startFleet and reports how many apps connected, their errors and its CPU
// time every quarter of a second, and its memory or its CPU time at once when asked (a
// phase of a second, the at-rest baseline, needs its CPU time at its start and end, not a
// quarter of a second off); closing its input stops the apps, and its last report says how
// they ended.
const loadFleetRole = "reliability-load-apps"

func init() { childproc.Register(loadFleetRole, runLoadFleet) }

type loadFleetConfig struct {
	Port     int    `json:"port"`
	Sessions int    `json:"sessions"`
	Dir      string `json:"dir"`
}

// fleetRequest asks the child for its memory figures, or for its CPU time now.
type fleetRequest struct {
	Measure bool `json:"measure"`
	CPU     bool `json:"cpu,omitempty"`
}

// fleetStatus is the child's report.
type fleetStatus struct {
	Connected  int          `json:"connected"`  // apps connected at least once
	Reconnects int          `json:"reconnects"` // connections beyond the first of each app
	Errors     []string     `json:"errors,omitempty"`
	CPU        usage.Millis `json:"cpuMs"`
	// Memory answers a fleetRequest for it; CPUAnswer says the report answers one for the
	// CPU time.
	Memory    *fleetMemory `json:"memory,omitempty"`
	CPUAnswer bool         `json:"cpuAnswer,omitempty"`
	// Final is the report after every app stopped.
	Final bool `json:"final,omitempty"`
}

// fleetMemory is the child's memory with every app connected and idle, against the same
// process before any app started.
type fleetMemory struct {
	HeapPerSession  int64 `json:"heapPerSession"`
	StackPerSession int64 `json:"stackPerSession"`
}

func runLoadFleet(ctx context.Context, p *childproc.Parent) error {
	var cfg loadFleetConfig
	if err := p.Receive(ctx, &cfg); err != nil {
		return err
	}
	settle()
	before := snapshotMemory(false)
	f := startFleet(ctx, cfg.Port, cfg.Dir, LoadOptions{Sessions: cfg.Sessions, Logger: slog.New(slog.DiscardHandler)})
	reqs := make(chan fleetRequest)
	go func() {
		defer close(reqs)
		for {
			var r fleetRequest
			if err := p.Receive(ctx, &r); err != nil {
				return
			}
			reqs <- r
		}
	}()
	reported := 0
	status := func() fleetStatus {
		errs := f.runErrors()
		st := fleetStatus{Connected: f.connected(), Reconnects: f.reconnects(), Errors: errs[reported:],
			CPU: usage.Millis(usage.ProcessCPU())}
		reported = len(errs)
		return st
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case r, open := <-reqs:
			if !open { // the parent closed the child's input: stop
				f.stop()
				st := status()
				st.Final = true
				return p.Send(st)
			}
			if r.CPU {
				st := status()
				st.CPUAnswer = true
				if err := p.Send(st); err != nil {
					return err
				}
			}
			if r.Measure {
				settle()
				now := snapshotMemory(false)
				st := status()
				n := int64(cfg.Sessions)
				st.Memory = &fleetMemory{HeapPerSession: (int64(now.heap) - int64(before.heap)) / n,
					StackPerSession: (int64(now.stack) - int64(before.stack)) / n}
				if err := p.Send(st); err != nil {
					return err
				}
			}
		case <-tick.C:
			if err := p.Send(status()); err != nil {
				return err
			}
		}
	}
}

// childFleet is the parent's view of the apps in a child process.
type childFleet struct {
	child  *childproc.Child
	memory chan fleetMemory
	cpuNow chan time.Duration // answers to a request for the CPU time
	final  chan struct{}      // closed once the last report, or the child's end, was read

	mu     sync.Mutex
	last   fleetStatus
	errs   []string
	broken error // the child ended or wrote something unreadable
}

func startChildFleet(port int, dir string, opts LoadOptions) (*childFleet, error) {
	c, err := childproc.Start(loadFleetRole, loadFleetConfig{Port: port, Sessions: opts.Sessions, Dir: dir})
	if err != nil {
		return nil, err
	}
	f := &childFleet{child: c, memory: make(chan fleetMemory, 1), cpuNow: make(chan time.Duration, 1), final: make(chan struct{})}
	go f.read()
	return f, nil
}

func (f *childFleet) read() {
	defer close(f.final)
	for {
		var st fleetStatus
		if err := f.child.Receive(&st); err != nil {
			f.mu.Lock()
			f.broken = err
			f.errs = append(f.errs, "the app process: "+err.Error())
			f.mu.Unlock()
			return
		}
		f.mu.Lock()
		f.errs = append(f.errs, st.Errors...)
		st.Errors = nil
		f.last = st
		f.mu.Unlock()
		if st.Memory != nil {
			f.memory <- *st.Memory
		}
		if st.CPUAnswer {
			select {
			case f.cpuNow <- st.CPU.D():
			default: // an answer nobody waited for is still there: cpu drops it
			}
		}
		if st.Final {
			return
		}
	}
}

// measure asks the child for its memory figures with every app connected.
func (f *childFleet) measure() (fleetMemory, error) {
	if err := f.child.Send(fleetRequest{Measure: true}); err != nil {
		return fleetMemory{}, err
	}
	select {
	case m := <-f.memory:
		return m, nil
	case <-f.final:
		return fleetMemory{}, fmt.Errorf("reliability: the app process ended: %v", f.brokenErr())
	case <-time.After(time.Minute):
		return fleetMemory{}, errors.New("reliability: the app process did not report its memory within a minute")
	}
}

func (f *childFleet) brokenErr() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.broken
}

func (f *childFleet) runErrors() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.errs...)
}

func (f *childFleet) reconnects() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last.Reconnects
}

// cpu asks the child for its CPU time now; when it cannot answer, the last report's.
func (f *childFleet) cpu() time.Duration {
	select {
	case <-f.cpuNow: // the answer to a request that timed out
	default:
	}
	if f.child.Send(fleetRequest{CPU: true}) == nil {
		select {
		case d := <-f.cpuNow:
			return d
		case <-f.final:
		case <-time.After(10 * time.Second):
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last.CPU.D()
}

// stop closes the child's input, which stops its apps, and waits for its last report and
// its exit.
func (f *childFleet) stop() {
	f.child.CloseInput()
	select {
	case <-f.final:
	case <-time.After(2 * time.Minute):
	}
	if _, err := f.child.Wait(10 * time.Second); err != nil && !errors.Is(err, io.EOF) {
		f.mu.Lock()
		if f.broken == nil {
			f.errs = append(f.errs, "the app process: "+err.Error())
		}
		f.mu.Unlock()
	}
}

// separateMemoryFigures are the memory figures of a run whose apps are in a child process:
// this process's growth is the host's alone.
func separateMemoryFigures(before, after memSnapshot, apps fleetMemory, n int) Memory {
	per := func(a, b uint64) int64 { return (int64(a) - int64(b)) / int64(n) }
	host, hostStack := per(after.heap, before.heap), per(after.stack, before.stack)
	return Memory{
		HostHeapPerSession:  host,
		HostStackPerSession: hostStack,
		AppHeapPerSession:   apps.HeapPerSession,
		HeapPerSession:      host + apps.HeapPerSession,
		StackPerSession:     hostStack + apps.StackPerSession,
		HeapIdle:            after.heap,
	}
}
