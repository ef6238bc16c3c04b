package session

import (
	"errors"
	"testing"
)

// The fuzz target checks that the control parser never panics, that every failure is
// ErrMalformed, and that a refusal stays answerable.

func FuzzParseControl(f *testing.F) {
	for _, s := range []string{openReq, stateReq, completeReq, profileReq} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := ParseControl(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			// A refusal the host answers by id must be answerable.
			if e != nil {
				if _, err := e.Reply(false, "x", nil).Marshal(); err != nil {
					t.Fatal(err)
				}
			}
			return
		}
		// Whatever a host does with a parsed request must not panic.
		var st AppState
		_ = e.DecodePayload(&st)
		var open SessionOpen
		_ = e.DecodePayload(&open)
		_, _ = ParseDeviceProfile(e.Payload)
		if e.Type == TypeControlRequest {
			if _, err := e.Reply(false, "x", nil).Marshal(); err != nil {
				t.Fatal(err)
			}
		}
	})
}
