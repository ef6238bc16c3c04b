package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/cmd/ansight/internal/usage"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/uiauto"
	"github.com/ansight-go/ansight/wire/uitree"
)

// BenchmarkUITap measures what `ansight ui tap` costs beside the two calls it stands for
// (ui.get_visual_tree, then ui.perform_action on that capture's node), in one run with
// alternating rounds, against the demo (host and app in one child process, as `ansight demo
// --keep-running` runs them): through the host API (one UI request against two call
// requests, the resolution's own cost) and through the binary (one `ansight ui tap` process
// against two `ansight app call` processes, what a script pays). Each reports the wall time
// per round and the child's CPU (user + system, as getrusage counts it, read from /proc)
// per round, and the ratio.
//
//	go test ./cmd/ansight/internal/cli -run '^$' -bench BenchmarkUITap -benchtime 200x
func BenchmarkUITap(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	bin := b.TempDir()
	ansight := filepath.Join(bin, "ansight")
	if err := os.Symlink(exe, ansight); err != nil {
		b.Fatal(err)
	}
	state := b.TempDir()
	demo := exec.Command(ansight, "--state-dir", state, "demo", "--keep-running", "--no-player")
	if err := demo.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { demo.Process.Kill(); demo.Wait() }()
	c := hostapi.NewClient(filepath.Join(state, hostapi.SocketName))
	ctx := context.Background()
	var sid string
	for deadline := time.Now().Add(60 * time.Second); sid == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if s, err := c.Sessions(ctx); err == nil && len(s.Sessions) > 0 && s.Sessions[0].State == hostapi.StateConnected {
			sid = s.Sessions[0].ID
		}
	}
	if sid == "" {
		b.Fatal("the demo did not connect")
	}
	// The walkthrough leaves the editor open; the search field is on the list screen, and a
	// tap on it only focuses it, so every round acts on the same screen.
	if _, err := c.UI(ctx, sid, hostapi.UIRequest{Request: uiauto.Request{Operation: uiauto.OpBack}}); err != nil {
		b.Fatal(err)
	}
	tap := hostapi.UIRequest{Request: uiauto.Request{Operation: uiauto.OpTap, Selector: uitree.Selector{AutomationID: "searchField"}}}
	api := map[string]func() error{
		"ui": func() error {
			op, err := c.UI(ctx, sid, tap)
			if err == nil && !op.Succeeded {
				err = fmt.Errorf("%s", op.Message)
			}
			return err
		},
		"calls": func() error {
			t, err := c.Call(ctx, sid, hostapi.CallRequest{ToolID: "ui.get_visual_tree"}, nil)
			if err != nil || !t.Success {
				return fmt.Errorf("capture: %v %+v", err, t)
			}
			var tree struct {
				SnapshotID string `json:"snapshotId"`
			}
			if err := json.Unmarshal(t.Result.Result, &tree, json.RejectUnknownMembers(false)); err != nil {
				return err
			}
			args := jsontext.Value(`{"snapshotId":"` + tree.SnapshotID + `","nodeId":"list.search","action":"tap"}`)
			p, err := c.Call(ctx, sid, hostapi.CallRequest{ToolID: "ui.perform_action", Arguments: args}, nil)
			if err == nil && !p.Success {
				err = fmt.Errorf("%+v", p.Error)
			}
			return err
		},
	}
	run := func(args ...string) ([]byte, error) {
		cmd := exec.Command(ansight, append([]string{"--state-dir", state}, args...)...)
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Stderr = &out
		err := cmd.Run()
		return out.Bytes(), err
	}
	cli := map[string]func() error{
		"ui": func() error {
			out, err := run("ui", "tap", "--session", sid, "--automation-id", "searchField")
			if err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		},
		"calls": func() error {
			out, err := run("app", "call", sid, "ui.get_visual_tree", "--json")
			if err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			var tree struct { // ansight.app-call/v2
				Result struct {
					SnapshotID string `json:"snapshotId"`
				} `json:"result"`
			}
			if err := json.Unmarshal(out, &tree, json.RejectUnknownMembers(false)); err != nil {
				return err
			}
			out, err = run("app", "call", sid, "ui.perform_action", "--arguments",
				`{"snapshotId":"`+tree.Result.SnapshotID+`","nodeId":"list.search","action":"tap"}`)
			if err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		},
	}
	for _, level := range []struct {
		name   string
		rounds map[string]func() error
		n      int
	}{{"api", api, b.N}, {"cli", cli, max(1, b.N/10)}} {
		var wall, cpu [2]time.Duration
		start := usage.Now()
		for i := range 2 * level.n {
			which, round := i%2, level.rounds["ui"]
			if which == 1 {
				round = level.rounds["calls"]
			}
			c0, t0 := childCPU(b, demo.Process.Pid), time.Now()
			if err := round(); err != nil {
				b.Fatal(err)
			}
			wall[which] += time.Since(t0)
			cpu[which] += childCPU(b, demo.Process.Pid) - c0
		}
		span := start.Since(0)
		per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(level.n) }
		b.ReportMetric(per(wall[0]), level.name+"-ui-us/op")
		b.ReportMetric(per(wall[1]), level.name+"-calls-us/op")
		b.ReportMetric(float64(wall[0])/float64(wall[1]), level.name+"-wall-ratio")
		b.ReportMetric(per(cpu[0]), level.name+"-ui-hostcpu-us/op")
		b.ReportMetric(per(cpu[1]), level.name+"-calls-hostcpu-us/op")
		if cpu[1] > 0 {
			b.ReportMetric(float64(cpu[0])/float64(cpu[1]), level.name+"-hostcpu-ratio")
		}
		b.Logf("%s: %d alternating rounds each; %s", level.name, level.n, span.Conditions())
	}
}

// childCPU is a process's user + system time so far (/proc/<pid>/stat, the clock ticks
// getrusage counts).
func childCPU(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Skip("no /proc: the host's CPU cannot be read")
	}
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond // USER_HZ = 100
}
