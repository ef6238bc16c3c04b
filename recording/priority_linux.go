package recording

import (
	"runtime"
	"syscall"
)

// writerNice is how much nicer than the process the writer's thread runs (Linux): the
// writer is background work, and on a machine whose CPUs are busy the kernel should run
// what answers tool calls first — the host's session readers and callers, and the apps,
// which often share the host's machine (a simulator, the bench's senders). At nice 0 the
// writer's bursts (SQLite, files, the parse) kept both CPUs of a 2-core machine busy and
// the app's thread that had to answer a call waited on the kernel's run queue: the
// senders' process waited there 0.30 s a second with recording off, 0.62 with it on, for
// the same work. 10, not 19: the writer holds the recorder's lock for microseconds at a
// time, and a thread descheduled inside them stalls the readers until it runs again; at
// 10 its share against a busy thread is a tenth, not 1/70. The same holds for the Go
// processor (P) the writer runs on: while the kernel keeps the thread waiting, that P
// runs nothing else and a garbage collection's stop-the-world waits for it, so on a
// machine whose CPUs other processes keep busy the host has one P less (the readers'
// goroutines move to the other one). `ansight bench --record` under 1.1–1.6 CPUs of other
// work (docs/performance.md, round 4, sixth pass) did not tell nice 10 from 0 apart.
const writerNice = 10

// lowerWriterPriority locks the calling goroutine (the writer) to its thread and makes
// that thread writerNice nicer, unless the system refuses. The goroutine is meant to end
// locked: its thread then ends with it rather than run other goroutines at that priority.
func lowerWriterPriority() {
	runtime.LockOSThread()
	tid := syscall.Gettid()
	// The raw getpriority returns 20 - nice (1..40).
	cur, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
	if err != nil {
		return
	}
	nice := min(20-cur+writerNice, 19)
	syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice)
}
