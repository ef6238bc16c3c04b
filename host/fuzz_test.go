package host

import (
	"net/netip"
	"testing"

	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/wire/session"
)

// FuzzHandleDatagram: any datagram either goes unanswered or gets a well-formed result
// for its own requestId; nothing panics.
func FuzzHandleDatagram(f *testing.F) {
	dg, _ := newApp("com.example.app").local().Marshal()
	f.Add(dg, true)
	f.Add([]byte(`{"type":"ENROLLMENT_CONNECT","ver":2,"requestId":"r","enrollmentMode":"invite","inviteId":"x","appId":"a","deviceId":"d","deviceName":null,"accessToken":"t"}`), false)
	f.Add([]byte(`{"type":"ENROLLMENT_CONNECT","ver":2,"requestId":"r","enrollmentMode":null,"inviteId":"x","appId":"a","appId":"b","deviceId":"d","deviceName":"n","accessToken":"t"}`), true)
	s, err := New(Options{EnrollmentBurst: 1 << 30})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, fromLoopback bool) {
		src := netip.MustParseAddrPort("192.0.2.1:40000")
		if fromLoopback {
			src = netip.MustParseAddrPort("127.0.0.1:40000")
		}
		reply := s.handleDatagram(data, src)
		if reply == nil {
			return
		}
		req, perr := pairing.ParseEnrollmentConnect(data)
		if req == nil {
			t.Fatalf("answered an unanswerable datagram: %v", perr)
		}
		res, err := pairing.ParseEnrollmentResult(reply)
		if err != nil || res.RequestID != req.RequestID {
			t.Fatalf("reply %s: %v", reply, err)
		}
		if perr != nil && res.Accepted {
			t.Fatalf("accepted a malformed datagram (%v): %s", perr, reply)
		}
	})
}

// FuzzControl: every parsed control request gets an answer that the SDKs can parse.
func FuzzControl(f *testing.F) {
	for _, s := range []string{sdkOpen, sdkProfile, sdkState, sdkProperties, sdkLog, sdkComplete,
		dotnetCrashHandoff("c1", "p1", "app-001", "p2"), dotnetAnnotationSubmit("1b4e28ba2fa111d2883f0016d3cca427",
			"1b4e28ba-2fa1-11d2-883f-0016d3cca427", "0123456789abcdef0123456789abcdef", 10)} {
		f.Add([]byte(s))
	}
	srv, err := New(Options{})
	if err != nil {
		f.Fatal(err)
	}
	sess := &Session{srv: srv, id: "fuzz-001"}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := session.ParseControl(data)
		if err != nil || req.Type != session.TypeControlRequest {
			return
		}
		ok, msg, payload := srv.control(sess, nil, req)
		b, err := req.Reply(ok, msg, payload).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		resp, err := session.ParseControl(b)
		if err != nil || resp.ReplyTo != req.ID || resp.Action != req.Action {
			t.Fatalf("reply %s: %v", b, err)
		}
	})
}
