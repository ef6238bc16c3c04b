package reliability

import (
	"runtime"
	"strings"
)

// modulePath prefixes every function of this module in a stack.
const modulePath = "github.com/ansight-go/ansight/"

// side is the end of a session a stack belongs to.
type side int

const (
	sideOther side = iota
	sideHost
	sideApp
)

// sideOf attributes a stack to the host or to an app: the frame nearest the leaf that
// belongs to one of them decides. The only HTTP server in a load run is the host's, and
// the only HTTP client the apps' dialer.
func sideOf(stack []uintptr) side {
	frames := runtime.CallersFrames(stack)
	fallback := sideOther
	for {
		f, more := frames.Next()
		fn := f.Function
		switch {
		case hasPackage(fn, "host"):
			return sideHost
		case hasPackage(fn, "app"):
			return sideApp
		case fallback == sideOther && strings.HasPrefix(fn, "net/http.(*conn)"):
			fallback = sideHost
		case fallback == sideOther && (strings.HasPrefix(fn, "net/http.(*Transport)") || strings.HasPrefix(fn, "net/http.(*persistConn)")):
			fallback = sideApp
		}
		if !more {
			return fallback
		}
	}
}

// hasPackage reports whether fn is in the module's package pkg or below it.
func hasPackage(fn, pkg string) bool {
	rest, ok := strings.CutPrefix(fn, modulePath+pkg)
	return ok && (strings.HasPrefix(rest, ".") || strings.HasPrefix(rest, "/"))
}

// memSnapshot is the process's memory after a collection.
type memSnapshot struct {
	heap, stack    uint64 // HeapAlloc, StackInuse
	hostHeap       int64  // live profiled bytes allocated by the host
	hostGoroutines int    // goroutines whose stack runs through the host
	goroutines     int    // all goroutines
}

func snapshotMemory(profile bool) memSnapshot {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := memSnapshot{heap: ms.HeapAlloc, stack: ms.StackInuse, hostGoroutines: countHostGoroutines(), goroutines: runtime.NumGoroutine()}
	if profile {
		s.hostHeap = hostHeapBytes()
	}
	return s
}

// hostHeapBytes sums the live bytes of the heap profile allocated on the host's side.
func hostHeapBytes() int64 {
	var recs []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, true)
	for {
		recs = make([]runtime.MemProfileRecord, n+64)
		var ok bool
		if n, ok = runtime.MemProfile(recs, true); ok {
			recs = recs[:n]
			break
		}
	}
	var total int64
	for i := range recs {
		if b := recs[i].InUseBytes(); b != 0 && sideOf(recs[i].Stack()) == sideHost {
			total += b
		}
	}
	return total
}

func countHostGoroutines() int {
	var recs []runtime.StackRecord
	n, _ := runtime.GoroutineProfile(nil)
	for {
		recs = make([]runtime.StackRecord, n+64)
		var ok bool
		if n, ok = runtime.GoroutineProfile(recs); ok {
			recs = recs[:n]
			break
		}
	}
	count := 0
	for i := range recs {
		if sideOf(recs[i].Stack()) == sideHost {
			count++
		}
	}
	return count
}

// memoryFigures turns the snapshots before and after n sessions connected into per-session
// figures.
func memoryFigures(before, after memSnapshot, n int, profiled bool) Memory {
	per := func(a, b int64) int64 { return (a - b) / int64(n) }
	m := Memory{
		HeapPerSession:  per(int64(after.heap), int64(before.heap)),
		StackPerSession: per(int64(after.stack), int64(before.stack)),
		HeapIdle:        after.heap,
	}
	if profiled {
		m.HostHeapPerSession = per(after.hostHeap, before.hostHeap)
	}
	return m
}
