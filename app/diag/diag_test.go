package diag_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/diag"
	"github.com/ansight-go/ansight/app/files"
	"github.com/ansight-go/ansight/app/telemetry"
	"github.com/ansight-go/ansight/wire"
)

func harness(t *testing.T) *apptest.Harness {
	t.Helper()
	a := app.New(app.Options{})
	tel := telemetry.New(telemetry.Options{MetricsInterval: -1})
	slog.New(tel.Handler(nil, nil)).Info("service started", "port", 8080)
	if err := diag.Register(a, diag.Options{Telemetry: tel}); err != nil {
		t.Fatal(err)
	}
	return apptest.New(t, a)
}

func call(t *testing.T, h *apptest.Harness, tool, args string) apptest.Response {
	t.Helper()
	r := h.Send(wire.TypeCall, `{"toolId":"`+tool+`","arguments":`+args+`}`)
	if r.Err != nil {
		t.Fatalf("%s: %v", tool, r.Err)
	}
	return r
}

func TestDiagnosticsTools(t *testing.T) {
	t.Parallel()
	h := harness(t)
	if r := call(t, h, diag.RuntimeToolID, `{}`); !strings.Contains(string(r.Payload), `"goVersion":"go1.`) ||
		!strings.Contains(string(r.Payload), `"mainPath":`) {
		t.Errorf("runtime = %s", r.Payload)
	}
	if r := call(t, h, diag.MetricsToolID, `{"prefix":"/sched/"}`); !strings.Contains(string(r.Payload), `"name":"/sched/goroutines","unit":"goroutines"`) ||
		strings.Contains(string(r.Payload), `"/gc/`) {
		t.Errorf("metrics = %.300s", r.Payload)
	}
	if r := call(t, h, diag.GoroutinesToolID, `{}`); !strings.Contains(string(r.Payload), "goroutine ") {
		t.Errorf("goroutines = %.300s", r.Payload)
	}
	if r := call(t, h, diag.LogTailToolID, `{"lines":5}`); !strings.Contains(string(r.Payload), `msg=\"service started\" port=8080`) {
		t.Errorf("log tail = %s", r.Payload)
	}
	for _, tc := range []struct{ tool, args, kind string }{{diag.HeapProfileToolID, `{}`, "heap"}, {diag.CPUProfileToolID, `{"seconds":1}`, "cpu"}} {
		t.Run(tc.tool, func(t *testing.T) {
			h := apptest.New(t, h.App())
			r := call(t, h, tc.tool, tc.args)
			if len(r.Artifacts) != 0 {
				t.Errorf("the tool sent %d transfers itself; the official host would drop them", len(r.Artifacts))
			}
			var res struct {
				Kind      string            `json:"kind"`
				SizeBytes int64             `json:"sizeBytes"`
				Artifact  files.ArtifactRef `json:"artifact"`
			}
			if err := wire.Unmarshal(r.Result.Result, &res); err != nil {
				t.Fatal(err)
			}
			ref := res.Artifact
			if res.Kind != tc.kind || ref.ProviderID != diag.ProviderID || !strings.HasPrefix(ref.ArtifactID, tc.kind+"-") ||
				ref.Request.ToolID != files.RequestArtifactToolID || ref.SizeBytes != res.SizeBytes {
				t.Fatalf("result = %s", r.Result.Result)
			}
			// The pointer is a ready call: it streams the profile, on either host.
			args, _ := wire.Marshal(ref.Request.Arguments)
			got := call(t, h, ref.Request.ToolID, string(args))
			if len(got.Artifacts) != 1 || len(got.OfficialHost) != 1 || got.Artifacts[got.OfficialHost[0]] == nil {
				t.Fatalf("artifacts.request: %d transfers, the official host receives %v", len(got.Artifacts), got.OfficialHost)
			}
			b := got.Artifacts[got.OfficialHost[0]]
			// A pprof file is a gzipped protocol buffer.
			if _, err := gzip.NewReader(bytes.NewReader(b)); err != nil || int64(len(b)) != res.SizeBytes {
				t.Errorf("the artifact (%d bytes, %d announced) is not a pprof file: %v", len(b), res.SizeBytes, err)
			}
			// artifacts.query lists it.
			if q := call(t, h, files.QueryArtifactsToolID, `{"providerId":"diag"}`); !strings.Contains(string(q.Result.Result), `"id":"`+ref.ArtifactID+`"`) {
				t.Errorf("artifacts.query = %s", q.Result.Result)
			}
		})
	}
}

// TestArtifactsOnRequest: the heap profile and the goroutine dump are made when requested
// through artifacts.request; an unknown (or evicted) id fails with artifact_request_failed.
func TestArtifactsOnRequest(t *testing.T) {
	t.Parallel()
	h := harness(t)
	for _, tc := range []struct{ id, want string }{{diag.HeapArtifactID, "\x1f\x8b"}, {diag.GoroutinesArtifactID, "goroutine "}} {
		r := call(t, h, files.RequestArtifactToolID, `{"providerId":"diag","artifactId":"`+tc.id+`"}`)
		if len(r.OfficialHost) != 1 || !bytes.HasPrefix(r.Artifacts[r.OfficialHost[0]], []byte(tc.want)) {
			t.Errorf("%s: official host receives %v; artifact %.40q", tc.id, r.OfficialHost, r.Artifacts)
		}
	}
	if err := h.Fail(files.RequestArtifactToolID, `{"providerId":"diag","artifactId":"cpu-99"}`); err.Code != files.CodeArtifactRequestFailed {
		t.Errorf("unknown profile: %+v", err)
	}
}

// TestKeptProfilesBounded: at most MaxKeptProfiles captured profiles are kept; the oldest
// goes first.
func TestKeptProfilesBounded(t *testing.T) {
	t.Parallel()
	h := harness(t)
	var ids []string
	for range diag.MaxKeptProfiles + 2 {
		var res struct {
			Artifact files.ArtifactRef `json:"artifact"`
		}
		v, _ := h.Call(diag.HeapProfileToolID, `{}`)
		if err := wire.Unmarshal(v, &res); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Artifact.ArtifactID)
	}
	q, _ := h.Call(files.QueryArtifactsToolID, `{"providerId":"diag"}`)
	for i, id := range ids {
		listed := strings.Contains(string(q), `"id":"`+id+`"`)
		if want := i >= 2; listed != want {
			t.Errorf("profile %d (%s) listed = %v, want %v", i, id, listed, want)
		}
	}
	if err := h.Fail(files.RequestArtifactToolID, `{"providerId":"diag","artifactId":"`+ids[0]+`"}`); !strings.Contains(err.Message, "replaced") {
		t.Errorf("an evicted profile: %+v", err)
	}
}

// TestPolicies: only the CPU profile needs a write grant.
func TestPolicies(t *testing.T) {
	t.Parallel()
	r := harness(t).Send(wire.TypeQuery, `{"detail":"index"}`)
	if r.Catalog == nil {
		t.Fatalf("query: %+v", r.Err)
	}
	got := map[string]wire.Policy{}
	for _, e := range r.Catalog.Tools {
		got[e.ID] = e.Policy
	}
	for id, want := range map[string]wire.Policy{diag.RuntimeToolID: wire.PolicyRead, diag.MetricsToolID: wire.PolicyRead,
		diag.GoroutinesToolID: wire.PolicyRead, diag.HeapProfileToolID: wire.PolicyRead, diag.CPUProfileToolID: wire.PolicyWrite,
		diag.LogTailToolID: wire.PolicyRead} {
		if got[id] != want {
			t.Errorf("%s policy = %q, want %q", id, got[id], want)
		}
	}
}

// TestArgumentBounds: the bounds of seconds and lines are in the published schemas, so a
// call out of them is refused with the bound it broke, instead of running clamped.
// (Before, seconds 0 ran a one-second profile and 31 a thirty-second one.)
func TestArgumentBounds(t *testing.T) {
	t.Parallel()
	h := harness(t)
	for _, tc := range []struct{ tool, args, bound string }{
		{diag.CPUProfileToolID, `{"seconds":0}`, "minimum"},
		{diag.CPUProfileToolID, `{"seconds":-3}`, "minimum"},
		{diag.CPUProfileToolID, `{"seconds":31}`, "maximum"},
		{diag.LogTailToolID, `{"lines":0}`, "minimum"},
		{diag.LogTailToolID, `{"lines":1001}`, "maximum"},
	} {
		r := h.Send(wire.TypeCall, `{"toolId":"`+tc.tool+`","arguments":`+tc.args+`}`)
		if r.Err == nil || r.Err.Code != wire.CodeArgumentsSchemaInvalid || !strings.Contains(string(r.Err.Details), `"code":"`+tc.bound+`"`) {
			t.Errorf("%s %s = %+v %s, want %s (%s)", tc.tool, tc.args, r.Err, r.Payload, wire.CodeArgumentsSchemaInvalid, tc.bound)
		}
	}
	r := h.Send(wire.TypeQuery, `{"detail":"full"}`)
	if r.Catalog == nil {
		t.Fatalf("query: %+v", r.Err)
	}
	for _, d := range r.Catalog.Tools {
		if s := string(d.ArgumentsSchema); d.ID == diag.CPUProfileToolID && (!strings.Contains(s, `"minimum":1`) || !strings.Contains(s, `"maximum":30`)) {
			t.Errorf("diag.cpu_profile arguments schema = %s", s)
		}
	}
}

// TestCPUProfileOneAtATime: a CPU profile is refused (diag_profile_busy) while another
// runs, and while something else in the process holds the profiler. Not parallel: it
// holds the process-wide profiler itself.
func TestCPUProfileOneAtATime(t *testing.T) {
	h := harness(t)
	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan apptest.Response, 1)
	go func() {
		first <- apptest.New(t, h.App()).SendContext(ctx, wire.TypeCall, `{"toolId":"`+diag.CPUProfileToolID+`","arguments":{"seconds":30}}`)
	}()
	// The first profile runs once the profiler's writer goroutine is there.
	for !strings.Contains(goroutineDump(), "runtime/pprof.profileWriter(") {
		if t.Context().Err() != nil {
			t.Fatal("the first CPU profile never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	busy := apptest.New(t, h.App()).Fail(diag.CPUProfileToolID, `{"seconds":1}`)
	if busy.Code != diag.CodeProfileBusy || !strings.Contains(busy.Message, "already running") {
		t.Errorf("a second profile = %+v, want %s (already running)", busy, diag.CodeProfileBusy)
	}
	cancel() // the first ends early: its caller left
	if r := <-first; r.Err == nil {
		t.Errorf("the cancelled profile = %s, want an error", r.Payload)
	}

	// Someone else in the process (net/http/pprof, a test) holds the profiler.
	if err := pprof.StartCPUProfile(io.Discard); err != nil {
		t.Fatal(err)
	}
	inUse := h.Fail(diag.CPUProfileToolID, `{"seconds":1}`)
	pprof.StopCPUProfile()
	if inUse.Code != diag.CodeProfileBusy || !strings.Contains(inUse.Message, "in use") {
		t.Errorf("a profile while the profiler is held = %+v, want %s (in use)", inUse, diag.CodeProfileBusy)
	}
	// And once it is free again, a profile runs.
	if r := call(t, h, diag.CPUProfileToolID, `{"seconds":1}`); !strings.Contains(string(r.Result.Result), `"artifactId":"cpu-`) {
		t.Errorf("a profile after the others: %s", r.Result.Result)
	}
}

func goroutineDump() string {
	var b bytes.Buffer
	pprof.Lookup("goroutine").WriteTo(&b, 2)
	return b.String()
}
