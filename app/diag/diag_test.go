package diag_test

import (
	"bytes"
	"compress/gzip"
	"log/slog"
	"strings"
	"testing"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/diag"
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
	for _, tc := range []struct{ tool, args string }{{diag.HeapProfileToolID, `{}`}, {diag.CPUProfileToolID, `{"seconds":1}`}} {
		t.Run(tc.tool, func(t *testing.T) {
			r := call(t, apptest.New(t, h.App()), tc.tool, tc.args)
			if len(r.Artifacts) != 1 {
				t.Fatalf("%d artifacts", len(r.Artifacts))
			}
			for _, b := range r.Artifacts {
				// A pprof file is a gzipped protocol buffer.
				if _, err := gzip.NewReader(bytes.NewReader(b)); err != nil {
					t.Errorf("the artifact is not a pprof file: %v", err)
				}
			}
		})
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
