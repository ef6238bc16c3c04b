package bench

import (
	"context"
	"runtime"
	"strings"
)

// endAllocs counts the allocations of n calls of op at each end, the app's and the host's
// (which includes the caller: a call is made through the host's client), by the memory
// profile at a rate of one: each allocation's stack says whose goroutine made it — its
// outermost frame of this module's packages outside the harness is package app (or one
// below it) for the app, anything else for the host. The rate is raised for this
// measurement alone (its own calls, after a warm-up that lets every processor's next
// sample be drawn at the new rate) and put back.
func endAllocs(ctx context.Context, n int, op func(context.Context) error) (host, app float64, err error) {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	if _, _, err := timed(ctx, max(n/2, 1000), 1, op); err != nil { // warm-up at the new rate
		return 0, 0, err
	}
	h0, a0 := profiledAllocs()
	if _, _, err := timed(ctx, n, 1, op); err != nil {
		return 0, 0, err
	}
	h1, a1 := profiledAllocs()
	return float64(h1-h0) / float64(n), float64(a1-a0) / float64(n), nil
}

// modulePrefix is this module's import path, as function names in stacks begin.
const modulePrefix = "github.com/ansight-go/ansight/"

// profiledAllocs sums the memory profile's allocations so far by end (endAllocs). The
// profile is as of the last completed collection: two make it current.
func profiledAllocs() (host, app int64) {
	runtime.GC()
	runtime.GC()
	var recs []runtime.MemProfileRecord
	for n := 256; ; n *= 2 {
		recs = make([]runtime.MemProfileRecord, n)
		if got, ok := runtime.MemProfile(recs, true); ok {
			recs = recs[:got]
			break
		}
	}
	for i := range recs {
		if appStack(recs[i].Stack()) {
			app += recs[i].AllocObjects
		} else {
			host += recs[i].AllocObjects
		}
	}
	return host, app
}

// appStack reports whether the allocation at stack was made by the app: the outermost
// frame of this module, the harness aside, is package app or one below it.
func appStack(stack []uintptr) bool {
	outer := ""
	frames := runtime.CallersFrames(stack)
	for {
		f, more := frames.Next()
		if name, ok := strings.CutPrefix(f.Function, modulePrefix); ok && !strings.HasPrefix(name, "cmd/ansight/internal/bench.") {
			outer = name
		}
		if !more {
			break
		}
	}
	return strings.HasPrefix(outer, "app.") || strings.HasPrefix(outer, "app/")
}
