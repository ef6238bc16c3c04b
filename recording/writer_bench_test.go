package recording

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// BenchmarkWriteBatch writes what `ansight bench --record` sends in one commit interval:
// 50 sessions, each sending the official SDKs' telemetry in turn at five messages to a
// frame (50 messages and 10 frames a second), 15 items a batch as 3,000 items a second
// gather in 5 ms. An op is one batch, parsed, written and committed: the writer's CPU per
// batch, which the tool calls' tail waits behind on a busy host.
func BenchmarkWriteBatch(b *testing.B) {
	r, err := Open(Options{Dir: b.TempDir(), MinFrameInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	lines := officialLines(b)
	var texts [][]byte
	for _, l := range lines {
		if !bytesHasType(l, TypeDone) {
			texts = append(texts, l)
		}
	}
	jpeg := make([]byte, 15<<10)
	for i := range jpeg {
		jpeg[i] = byte(i * 7)
	}
	const sessions, perBatch = 50, 15
	at := time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	n := 0
	cpu0 := processCPU()
	for b.Loop() {
		batch := make([]item, 0, perBatch)
		for range perBatch {
			s := fmt.Sprintf("load-%03d", n%sessions)
			at = at.Add(time.Millisecond / 3)
			if n%6 == 5 {
				f, _ := wire.AppendASJP(nil, wire.ASJPFrame{Format: 1, Quality: 60, CapturedAt: at, Width: 360, Height: 779, JPEG: jpeg})
				batch = append(batch, item{session: s, arrival: at, op: opMessage, typ: transport.MessageBinary, data: f})
			} else {
				batch = append(batch, item{session: s, arrival: at, op: opMessage, typ: transport.MessageText, data: texts[n%len(texts)]})
			}
			n++
		}
		r.writeBatch(batch, false)
	}
	// The process's CPU time (getrusage): the wall time of a batch includes waiting for
	// the disk, and other processes' use of the machine.
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/batch")
}

// processCPU is the process's user and system CPU time.
func processCPU() time.Duration {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

func bytesHasType(line []byte, typ string) bool {
	obj, err := parseObject(line)
	if err != nil {
		return false
	}
	t, _ := str(obj.get("type"))
	return t == typ
}
