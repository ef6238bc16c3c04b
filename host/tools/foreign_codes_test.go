package tools

import (
	"testing"

	"github.com/ansight-go/ansight/wire"
)

// TestForeignErrorCodes: codes the official SDKs emit and ours never does reach the caller
// as they were sent — code, message and retryable — like any code of an app's own.
func TestForeignErrorCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		code      wire.Code
		retryable bool
	}{
		{"tool_runtime_not_initialized", false},
		{"tool_protocol_bridge_failed", true},  // newest .NET: "The app remains running."
		{"tool_call_arguments_invalid", false}, // Swift's name for tool_arguments_invalid
	} {
		t.Run(string(tc.code), func(t *testing.T) {
			t.Parallel()
			retry := "false"
			if tc.retryable {
				retry = "true"
			}
			hs := newHarness(t, Options{}, func(req *wire.Envelope) []msg {
				return []msg{text(`{"type":"tool.error","id":"` + req.ID + `.response","replyTo":"` + req.ID +
					`","sessionId":null,"sentAt":"2026-03-20T10:00:00.1234567+00:00","capability":"tool.exec",` +
					`"payload":{"code":"` + string(tc.code) + `","message":"from the app","retryable":` + retry + `,"details":null}}`)}
			})
			_, err := hs.c.Query(t.Context(), wire.Query{})
			we, ok := errorsAs[*wire.Error](err)
			if !ok || we.Code != tc.code || we.Message != "from the app" || we.Retryable != tc.retryable {
				t.Fatalf("err = %#v", err)
			}
		})
	}
}
