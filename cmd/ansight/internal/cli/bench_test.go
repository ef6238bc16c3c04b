package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/ansight-go/ansight/cmd/ansight/internal/bench"
	"github.com/ansight-go/ansight/hostapi"
)

func TestBenchOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		flags   benchFlags
		want    bench.Options
		wantErr string
	}{
		{"default", benchFlags{callers: 8, tool: bench.DefaultTool}, bench.DefaultOptions(), ""},
		{"quick", benchFlags{quick: true, callers: 8, tool: bench.DefaultTool}, bench.QuickOptions(), ""},
		{"callers and tool", benchFlags{callers: 3, tool: "bench.synthetic_00001"},
			func() bench.Options {
				o := bench.DefaultOptions()
				o.Callers, o.Tool = 3, "bench.synthetic_00001"
				return o
			}(), ""},
		{"no callers", benchFlags{callers: 0, tool: bench.DefaultTool}, bench.Options{}, "--callers"},
		{"too many callers", benchFlags{callers: 65, tool: bench.DefaultTool}, bench.Options{}, "--callers"},
		{"no tool", benchFlags{callers: 8}, bench.Options{}, "--tool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := benchOptions(tc.flags)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || exitCodeOf(context.Background(), err) != ExitUsage {
					t.Fatalf("err = %v, want a usage error about %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Rounds != tc.want.Rounds || got.Callers != tc.want.Callers || got.Tool != tc.want.Tool || got.Calls != tc.want.Calls {
				t.Errorf("options = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// tinyBench runs the real measurements at sizes that test the command, not the protocol.
func tinyBench(t *testing.T) {
	t.Helper()
	local, session := benchLocal, benchSession
	t.Cleanup(func() { benchLocal, benchSession = local, session })
	benchLocal = func(ctx context.Context, o bench.Options) (*bench.Report, error) {
		o.Calls, o.Rounds, o.ToolCounts, o.Queries = 10, 1, []int{5}, 2
		o.LargeResultBytes, o.LargeResults, o.ArtifactBytes = 40<<10, 1, 128<<10
		return bench.RunLocal(ctx, o)
	}
}

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errw bytes.Buffer
	code = Main(t.Context(), Env{Args: args, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errw, Version: "test"})
	return code, out.String(), errw.String()
}

func TestBenchJSON(t *testing.T) { // not parallel: it replaces benchLocal and benchSession
	tinyBench(t)
	code, out, errw := runCLI(t, "bench", "--json", "--callers", "2")
	if code != ExitOK {
		t.Fatalf("exit %d: %s%s", code, out, errw)
	}
	if errw != "" {
		t.Errorf("stderr with --json: %q", errw)
	}
	var rep struct {
		Schema  string `json:"schema"`
		Subject string `json:"subject"`
		Machine struct {
			CPUs int `json:"cpus"`
		} `json:"machine"`
		Options struct {
			Tool    string `json:"tool"`
			Callers int    `json:"callers"`
		} `json:"options"`
		Figures []struct {
			Group         string   `json:"group"`
			Name          string   `json:"name"`
			Unit          string   `json:"unit"`
			Value         *float64 `json:"value"`
			Baseline      string   `json:"baseline"`
			BaselineValue *float64 `json:"baselineValue"`
			Ratio         *float64 `json:"ratio"`
			Target        *struct {
				Op    string  `json:"op"`
				Ratio float64 `json:"ratio"`
			} `json:"target"`
			Met *bool `json:"met"`
		} `json:"figures"`
		DurationMS *int64 `json:"durationMs"`
	}
	if err := json.Unmarshal([]byte(out), &rep, json.RejectUnknownMembers(false)); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Schema != bench.Schema || rep.Subject == "" || rep.Machine.CPUs < 1 || rep.DurationMS == nil {
		t.Errorf("header: %+v", rep)
	}
	if rep.Options.Callers != 2 || rep.Options.Tool != bench.DefaultTool {
		t.Errorf("options: %+v", rep.Options)
	}
	groups, targets := map[string]bool{}, 0
	for _, f := range rep.Figures {
		groups[f.Group] = true
		if f.Name == "" || f.Unit == "" || f.Baseline == "" || f.Value == nil || f.BaselineValue == nil || f.Ratio == nil {
			t.Errorf("incomplete figure %+v", f)
		}
		if (f.Target == nil) != (f.Met == nil) {
			t.Errorf("%s: target without verdict", f.Name)
		}
		if f.Target != nil {
			targets++
		}
	}
	for _, g := range []string{"calls", "batch", "catalog", "payload", "artifact", "ui", "mcp"} {
		if !groups[g] {
			t.Errorf("no %s figures", g)
		}
	}
	// CPU per call with 1 and 2 callers, allocations per call at each end, repeated index,
	// definitions and full queries, artifact throughput and memory, the ui tap, the MCP
	// bridge's own share (unchanged's needs 10,000 tools).
	if targets != 11 {
		t.Errorf("%d targets", targets)
	}
}

func TestBenchTable(t *testing.T) { // not parallel: it replaces benchLocal and benchSession
	tinyBench(t)
	code, out, errw := runCLI(t, "bench", "--quick", "--callers", "1")
	if code != ExitOK {
		t.Fatalf("exit %d: %s%s", code, out, errw)
	}
	for _, s := range []string{"FIGURE", "BASELINE", "RATIO", "TARGET", "MET", "call throughput, 1 caller", "index, 5 tools", "Targets met:"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	if !strings.Contains(errw, "measuring calls...") {
		t.Errorf("no progress on stderr: %q", errw)
	}
}

func TestBenchErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"argument", []string{"bench", "extra"}, ExitUsage},
		{"callers", []string{"bench", "--callers", "0"}, ExitUsage},
		{"unknown flag", []string{"bench", "--load", "10"}, ExitUsage},
		{"no host", []string{"bench", "--session", "demo-001", "--state-dir", t.TempDir()}, ExitHostUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errw := runCLI(t, append(tc.args, "--json")...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s%s", code, tc.code, out, errw)
			}
			if !strings.Contains(out, `"ansight.cli.error/v1"`) {
				t.Errorf("no JSON error: %s", out)
			}
		})
	}
}

// TestBenchSession runs --session against a stub backend: the command hands the session id
// and options to the measurements and prints their report.
func TestBenchSession(t *testing.T) { // not parallel: it replaces benchLocal and benchSession
	session := benchSession
	t.Cleanup(func() { benchSession = session })
	var gotID string
	benchSession = func(ctx context.Context, b hostapi.Backend, id string, o bench.Options) (*bench.Report, error) {
		gotID = id
		if b == nil || o.Tool != "x.read" {
			t.Errorf("backend %v, options %+v", b, o)
		}
		return &bench.Report{Schema: bench.Schema, Subject: "session " + id, Skipped: []bench.Skip{{Measurement: "catalog", Reason: "r"}}}, nil
	}
	code, out, errw := runCLI(t, "bench", "--session", "s-001", "--tool", "x.read", "--state-dir", t.TempDir())
	if code != ExitOK || gotID != "s-001" {
		t.Fatalf("exit %d, id %q: %s%s", code, gotID, out, errw)
	}
	if !strings.Contains(out, "session s-001") || !strings.Contains(out, "catalog: r") {
		t.Errorf("output:\n%s", out)
	}
}
