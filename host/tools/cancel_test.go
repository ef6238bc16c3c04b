package tools

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ansight-go/ansight/wire"
)

// TestToolCancelSent: a call its caller gives up is cancelled in an app that takes
// tool.cancel — a tool.cancel naming the call's request id, after which no late answer is
// waited for — and never in one that does not; a limit that runs out sends none.
func TestToolCancelSent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		enable   bool
		timeout  bool
		wantSent bool
	}{
		{"advertised, caller cancels", true, false, true},
		{"not advertised", false, false, false},
		{"advertised, limit runs out", true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				app := newFakeApp(t, tool("t.slow", wire.PolicyRead, "s1"))
				app.onCall = func(*wire.Envelope, wire.Call) []msg { return nil } // never answers
				hs := newHarness(t, Options{Timeout: time.Second}, app.handler())
				if tc.enable {
					hs.c.EnableCancel()
				}
				if _, err := hs.c.Catalog(t.Context()); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				go func() {
					synctest.Wait()
					if !tc.timeout {
						cancel()
					}
				}()
				_, err := hs.c.Call(ctx, wire.Call{ToolID: "t.slow"})
				if tc.timeout != errors.Is(err, ErrTimeout) || !tc.timeout && !errors.Is(err, context.Canceled) {
					t.Fatalf("err = %v", err)
				}
				synctest.Wait()
				var call, cancels []*wire.Envelope
				for _, r := range hs.reqs() {
					switch r.Type {
					case wire.TypeCall:
						call = append(call, r)
					case wire.TypeCancel:
						cancels = append(cancels, r)
					}
				}
				if !tc.wantSent {
					if len(cancels) != 0 {
						t.Fatalf("a tool.cancel was sent: %s", cancels[0].Payload)
					}
					return
				}
				if len(call) != 1 || len(cancels) != 1 {
					t.Fatalf("%d calls, %d cancels", len(call), len(cancels))
				}
				var c wire.Cancel
				if err := wire.Unmarshal(cancels[0].Payload, &c); err != nil || c.RequestID != call[0].ID || cancels[0].Capability != wire.CapabilityToolExec {
					t.Fatalf("cancel %s (%v) for request %s", cancels[0].Payload, err, call[0].ID)
				}
				if hs.c.Busy() {
					t.Error("still waiting for an answer the app will not send")
				}
			})
		})
	}
}
