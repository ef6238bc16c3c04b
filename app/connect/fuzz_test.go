package connect

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire/session"
)

// FuzzJudgeReply feeds arbitrary datagrams to the enrollment reply logic: it must never
// panic, decide only for the pending requestId, and yield either a refusal or a ws://
// endpoint on the target address.
func FuzzJudgeReply(f *testing.F) {
	req := &pairing.EnrollmentConnect{RequestID: "req-1"}
	f.Add(accept(req, 56500, "tok"))
	f.Add(refuse(req, pairing.ReasonEnrollmentConsumed))
	f.Add([]byte(`{"type":"ENROLLMENT_RESULT","ver":2,"requestId":"req-1","accepted":true,"reason":"Ok","hostId":"","hostName":"","message":"","webSocketPort":1,"webSocketPath":"ws?a","webSocketToken":"t"}`))
	f.Add([]byte(`{"type":"ENROLLMENT_RESULT","ver":2,"requestId":"req-1","accepted":false,"reason":"\u001b[31mX","hostId":"","hostName":"","message":"a\nb"}`))
	e := &enrollment{stateDir: "/state"}
	target := netip.MustParseAddrPort("127.0.0.1:45123")
	f.Fuzz(func(t *testing.T, data []byte) {
		ep, decided, err := e.judge("req-1", target, data, discard)
		if !decided {
			if err != nil || ep.url != nil {
				t.Fatalf("undecided with a result: %v %v", ep, err)
			}
			return
		}
		if err != nil {
			var ee *EnrollmentError
			if !errors.As(err, &ee) {
				t.Fatalf("decision error %T is not an EnrollmentError", err)
			}
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r\x1b") || len(ee.Message) > maxPeerText+len("…") {
				t.Fatalf("error carries raw peer text: %q", msg)
			}
			return
		}
		if ep.url.Scheme != "ws" || ep.url.Hostname() != "127.0.0.1" || ep.url.RawQuery != "" || ep.token == "" {
			t.Fatalf("endpoint %v token %q", ep.url, ep.token)
		}
	})
}

// FuzzControlHandle feeds arbitrary messages to the control channel: it must never panic
// or block, and must deliver exactly the well-formed responses to the pending request.
func FuzzControlHandle(f *testing.F) {
	f.Add([]byte(`{"type":"CONTROL_RESP","id":null,"replyTo":"client.1","action":"session.open","payload":null,"success":true,"message":"ok"}`))
	f.Add([]byte(`{"type":"CONTROL_RESP","replyTo":"client.2","action":"x","success":false}`))
	f.Add([]byte(`{"type":"CONTROL_REQ","id":"client.1","action":"session.open"}`))
	f.Add([]byte(`{"type":"CONTROL_RESP","replyTo":"client.1","replyTo":"client.1","action":"a","success":true}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := newControlChannel(nil, discard, nil)
		ch := make(chan *session.ControlEnvelope, 1)
		c.pending["client.1"] = ch
		c.handle(transport.MessageText, data)
		c.handle(transport.MessageBinary, data)
		select {
		case env := <-ch:
			if env.Type != session.TypeControlResponse || env.ReplyTo != "client.1" {
				t.Fatalf("delivered %+v", env)
			}
			if _, still := c.pending["client.1"]; still {
				t.Fatal("delivered but still pending")
			}
		default:
			if _, still := c.pending["client.1"]; !still {
				t.Fatal("request dropped without delivery")
			}
		}
	})
}
