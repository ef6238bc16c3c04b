package recording

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// TestArchiveThroughput measures export and import of a 50 MB recording in both formats
// (and a sanitised export), wall and CPU time, for docs/performance.md and the issue's
// closing note. It runs only when ANSIGHT_MEASURE=1:
//
//	ANSIGHT_MEASURE=1 go test -run TestArchiveThroughput -v ./recording/
func TestArchiveThroughput(t *testing.T) {
	if os.Getenv("ANSIGHT_MEASURE") == "" {
		t.Skip("set ANSIGHT_MEASURE=1 to measure")
	}
	r := open(t, t.TempDir(), func(o *Options) { o.MinFrameInterval = -1; o.MaxBytes = 4 << 30; o.MaxSessionBytes = 4 << 30 })
	const sess = "com-example-big-001"
	at := time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))
	// Frames of 60 KiB of noise (JPEG-like: they do not compress) make most of it, as in a
	// real recording; then logs, metrics, touches, requests and a tree every 20 frames.
	noise := make([]byte, 60<<10)
	jpegHead := testJPEGSize(t, 320, 640)
	r.RecordMessage(sess, transport.MessageText, []byte(`{"type":"CLIENT_VISUAL_TREE","capturedAtUtc":"`+at.Format(time.RFC3339Nano)+`","snapshotId":"s0","payload":`+officialTree+`}`), at)
	var total int
	for i := 0; total < 50<<20; i++ {
		ts := at.Add(time.Duration(i) * 100 * time.Millisecond)
		for j := range noise {
			noise[j] = byte(rng.Uint32())
		}
		jpg := append(append([]byte{}, jpegHead...), noise...)
		f, _ := wire.AppendASJP(nil, wire.ASJPFrame{Format: 1, Quality: 60, CapturedAt: ts, Width: 320, Height: 640, JPEG: jpg})
		r.RecordMessage(sess, transport.MessageBinary, f, ts)
		total += len(jpg)
		for k := range 20 {
			line := fmt.Sprintf(`{"data":"level=INFO msg=\"request %d-%d done\" user=ann@example.com took=%dms"}`, i, k, k)
			r.RecordControl(sess, "client.log", []byte(line), true, "", ts)
			total += len(line)
		}
		r.RecordMessage(sess, transport.MessageText, []byte(fmt.Sprintf(`{"type":"CLIENT_METRICS","metrics":[{"channel":1,"value":%d,"capturedAtUtc":%q}]}`, i%60, ts.Format(time.RFC3339Nano))), ts)
		r.RecordMessage(sess, transport.MessageText, []byte(`{"type":"CLIENT_TOUCH_INPUT","schema":"ansight.touches.v1","t0":"`+ts.Format(time.RFC3339Nano)+`","space":"w","unit":"px","surface":[108,240,1],"rows":[[0,0,1,50,130],[40,2,1,50,130]]}`), ts)
		if i%20 == 0 {
			r.RecordMessage(sess, transport.MessageText, []byte(`{"type":"CLIENT_VISUAL_TREE","capturedAtUtc":"`+ts.Format(time.RFC3339Nano)+`","snapshotId":"s`+fmt.Sprint(i)+`","payload":`+officialTree+`}`), ts)
			r.RecordMessage(sess, transport.MessageText, []byte(`{"type":"CLIENT_NETWORK_REQUEST","request":{"schema":"ansight.network-request.v1","id":"q`+fmt.Sprint(i)+`","method":"GET","url":"https://api.example.com/items?page=`+fmt.Sprint(i)+`","startedAtUtc":"`+ts.Format(time.RFC3339Nano)+`","statusCode":200,"durationMilliseconds":12}}`), ts)
		}
		if i%50 == 0 {
			waitIdle(t, r)
		}
	}
	waitIdle(t, r)
	sum, _ := r.Session(context.Background(), sess)
	t.Logf("recording: %d records, %.1f MB (%d MB of frame bytes and text)", sum.Records, float64(sum.Bytes)/1e6, total>>20)
	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("load average at the start: %s", strings.TrimSpace(string(load)))
	measure := func(name string, fn func()) {
		var before, after syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &before)
		start := time.Now()
		fn()
		wall := time.Since(start)
		syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) * time.Nanosecond
		t.Logf("%-28s wall %7.2fs  cpu %7.2fs  %6.1f MB/s of recording (wall)", name, wall.Seconds(), cpu.Seconds(), float64(sum.Bytes)/1e6/wall.Seconds())
	}
	var ours, official []byte
	measure("export ours", func() { ours = exportBytes(t, r, sess, ExportOptions{}) })
	measure("export official", func() { official = exportBytes(t, r, sess, ExportOptions{Format: FormatOfficial}) })
	measure("export official --sanitize", func() { exportBytes(t, r, sess, ExportOptions{Format: FormatOfficial, Sanitize: true}) })
	measure("import ours", func() { importBytes(t, r, ours, ImportOptions{}) })
	measure("import official", func() { importBytes(t, r, official, ImportOptions{}) })
	t.Logf("archives: ours %.1f MB, official %.1f MB", float64(len(ours))/1e6, float64(len(official))/1e6)
	_ = bytes.MinRead
}
