package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/cmd/ansight/internal/reliability"
	"github.com/ansight-go/ansight/cmd/ansight/internal/usage"
)

// TestBenchLoadFlags: --load runs the apps in a child process with the flags' sizes, and
// its report prints as JSON (durations in milliseconds).
func TestBenchLoadFlags(t *testing.T) {
	load := benchLoad
	t.Cleanup(func() { benchLoad = load })
	var got reliability.LoadOptions
	benchLoad = func(ctx context.Context, o reliability.LoadOptions) (*reliability.LoadReport, error) {
		got = o
		return &reliability.LoadReport{Sessions: o.Sessions, Held: o.Sessions, Calls: 1, AppProcess: true,
			ConnectTime: usage.Millis(1500 * time.Millisecond), CallP50: usage.Millis(250 * time.Microsecond),
			Baseline: reliability.LoadBaseline{Requests: 10, Calls: 6, CallP50: usage.Millis(40 * time.Microsecond)}}, nil
	}
	code, out, errw := runCLI(t, "bench", "--load", "--sessions", "3", "--in-flight", "1", "--duration", "2s", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s%s", code, out, errw)
	}
	if !got.AppProcess || got.Sessions != 3 || got.InFlight != 1 || got.Duration != 2*time.Second {
		t.Errorf("options %+v", got)
	}
	for _, want := range []string{`"connectMs": 1500`, `"callP50Ms": 0.25`, `"appProcess": true`, `"baseline": {`, `"callP50Ms": 0.04`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in %s", want, out)
		}
	}
	if code, _, _ := runCLI(t, "bench", "--load", "--sessions", "10001", "--json"); code != ExitUsage {
		t.Errorf("10,001 sessions: exit %d, want %d", code, ExitUsage)
	}
}

// TestBenchEnrollFloodFlags: --enroll-flood hands its sizes to the flood, prints its report
// and fails when an app went unanswered.
func TestBenchEnrollFloodFlags(t *testing.T) {
	flood := benchFlood
	t.Cleanup(func() { benchFlood = flood })
	var got reliability.FloodOptions
	lost := 0
	benchFlood = func(ctx context.Context, o reliability.FloodOptions) (*reliability.FloodReport, error) {
		got = o
		return &reliability.FloodReport{Apps: o.Apps, InWindow: o.Apps - lost, Lost: lost, Accepted: o.Apps - lost,
			Window: usage.Millis(5 * time.Second), KernelDrops: -1}, nil
	}
	code, out, errw := runCLI(t, "bench", "--enroll-flood", "5", "--flooder", "0")
	if code != ExitOK || got.Apps != 5 || got.Flooder >= 0 {
		t.Fatalf("exit %d, options %+v: %s%s", code, got, out, errw)
	}
	if !strings.Contains(out, "5 within 5s") {
		t.Errorf("output:\n%s", out)
	}
	if code, _, _ := runCLI(t, "bench", "--enroll-flood", "5", "--flooder", "7", "--json"); code != ExitOK || got.Flooder != 7 {
		t.Errorf("--flooder 7: exit %d, options %+v", code, got)
	}
	lost = 2
	if code, _, errw := runCLI(t, "bench", "--enroll-flood", "5"); code != ExitFailure || !strings.Contains(errw, "2 of 5 apps got no answer") {
		t.Errorf("a lost answer: exit %d, stderr %q", code, errw)
	}
	for _, args := range [][]string{{"--enroll-flood", "-1"}, {"--enroll-flood", "5", "--load"}} {
		if code, _, _ := runCLI(t, append([]string{"bench", "--json"}, args...)...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, ExitUsage)
		}
	}
}

// TestBenchRecordFlags: --record takes --sessions and --duration when given and the
// recorder's load defaults otherwise, prints its report, and fails on dropped telemetry.
func TestBenchRecordFlags(t *testing.T) {
	record := benchRecord
	t.Cleanup(func() { benchRecord = record })
	var got reliability.RecordLoadOptions
	dropped := int64(0)
	benchRecord = func(ctx context.Context, o reliability.RecordLoadOptions) (*reliability.RecordLoadReport, error) {
		got = o
		return &reliability.RecordLoadReport{Sessions: max(o.Sessions, 50), Messages: o.Messages, Frames: o.Frames, Dropped: dropped,
			Off: reliability.RecordLatency{Calls: 10, P99: usage.Millis(time.Millisecond)}, On: reliability.RecordLatency{Calls: 10, P99: usage.Millis(2 * time.Millisecond)},
			P99Ratio: 2}, nil
	}
	if code, out, errw := runCLI(t, "bench", "--record"); code != ExitOK || got.Sessions != 0 || got.Duration != 0 || got.Messages != 50 || got.Frames != 10 {
		t.Fatalf("exit %d, options %+v: %s%s", code, got, out, errw)
	}
	code, out, errw := runCLI(t, "bench", "--record", "--sessions", "40", "--messages", "20", "--frames", "2", "--duration", "30s")
	if code != ExitOK || got.Sessions != 40 || got.Messages != 20 || got.Frames != 2 || got.Duration != 30*time.Second {
		t.Fatalf("exit %d, options %+v: %s%s", code, got, out, errw)
	}
	if !strings.Contains(out, "on/off      p99 2.00×") {
		t.Errorf("output:\n%s", out)
	}
	dropped = 3
	if code, _, errw := runCLI(t, "bench", "--record"); code == ExitOK || !strings.Contains(errw, "3 telemetry messages dropped") {
		t.Errorf("exit %d with 3 dropped: %s", code, errw)
	}
	if code, _, _ := runCLI(t, "bench", "--record", "--load"); code != ExitUsage {
		t.Errorf("--record --load: exit %d", code)
	}
}

// TestBenchRecordMaxSessions: --record --max-sessions runs the capacity search at 20
// messages and 2 frames a second unless told, with --duration as each step's length,
// prints every step and the largest count held, and refuses --sessions and a bound out of
// range.
func TestBenchRecordMaxSessions(t *testing.T) {
	search := benchRecCap
	t.Cleanup(func() { benchRecCap = search })
	var got reliability.RecordCapacityOptions
	benchRecCap = func(ctx context.Context, o reliability.RecordCapacityOptions) (*reliability.RecordCapacityReport, error) {
		got = o
		return &reliability.RecordCapacityReport{Messages: o.Messages, Frames: o.Frames, Limit: o.Limit, Largest: 150,
			Steps: []reliability.CapacityStep{{Sessions: 100, Held: true}, {Sessions: 200, Why: "2 telemetry messages dropped"}, {Sessions: 150, Held: true}}}, nil
	}
	code, out, errw := runCLI(t, "bench", "--record", "--max-sessions", "2000")
	if code != ExitOK || got.Messages != 20 || got.Frames != 2 || got.Limit != 2000 || got.Step != 0 {
		t.Fatalf("exit %d, options %+v: %s%s", code, got, out, errw)
	}
	if !strings.Contains(out, "200 sessions  NOT held: 2 telemetry messages dropped") || !strings.Contains(out, "largest held: 150 sessions") {
		t.Errorf("output:\n%s", out)
	}
	if code, _, errw := runCLI(t, "bench", "--record", "--max-sessions", "300", "--messages", "10", "--frames", "0", "--duration", "15s"); code != ExitOK ||
		got.Messages != 10 || got.Frames != 0 || got.Step != 15*time.Second {
		t.Fatalf("exit %d, options %+v: %s", code, got, errw)
	}
	for _, args := range [][]string{
		{"bench", "--record", "--max-sessions", "300", "--sessions", "40"},
		{"bench", "--record", "--max-sessions", "10"},
		{"bench", "--record", "--max-sessions", "100000"},
		{"bench", "--max-sessions", "300"},
	} {
		if code, _, _ := runCLI(t, args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, ExitUsage)
		}
	}
}
