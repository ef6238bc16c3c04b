package pairing

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// The fuzz targets check that the network parsers never panic, that every failure is
// ErrMalformed, and that what parses re-encodes to something that parses again.

func FuzzParseEnrollmentConnect(f *testing.F) {
	f.Add([]byte(dotnetConnect))
	f.Add([]byte(kotlinConnect))
	f.Add([]byte(strings.Replace(dotnetConnect, `"appId":"com.example.app"`, `"appId":"com.example.app","AppId":"x"`, 1)))
	f.Add([]byte(strings.Replace(dotnetConnect, `"enrollmentMode":"local"`, `"enrollmentMode":null`, 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseEnrollmentConnect(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			if c != nil { // answerable: by one usable requestId, with a reason
				if usableRequestID(c.RequestID) != nil || !utf8.ValidString(c.RequestID) {
					t.Fatalf("answerable by requestId %q", c.RequestID)
				}
				if r, msg := c.Refusal(); r == ReasonOK || r == "" || msg == "" {
					t.Fatalf("refusal %q %q", r, msg)
				}
			}
			return
		}
		b, err := c.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseEnrollmentConnect(b)
		if err != nil {
			if len(b) > MaxDatagramBytes {
				return // escaping can push a valid datagram over the cap
			}
			t.Fatalf("re-parse %s: %v", b, err)
		}
		if back.AppID != c.AppID || back.AccessToken != c.AccessToken || back.Mode() != c.Mode() {
			t.Fatalf("round trip changed %+v to %+v", c, back)
		}
	})
}

func FuzzParseEnrollmentResult(f *testing.F) {
	ok, _ := (&EnrollmentResult{RequestID: "r", Accepted: true, Reason: ReasonOK, HostID: "h", HostName: "n", Message: "m",
		WebSocketPort: 56500, WebSocketPath: "/ws", WebSocketToken: "t"}).Marshal()
	f.Add(ok)
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseEnrollmentResult(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			return
		}
		if r.Accepted && (r.WebSocketPort == 0 || r.WebSocketToken == "") {
			t.Fatalf("accepted without endpoint: %+v", r)
		}
	})
}

func FuzzParseInvite(f *testing.F) {
	code, _ := testDocument().Code()
	f.Add(code)
	f.Add(`{"schema":"ansight.enrollment-invite.v2","inviteId":"x"}`)
	f.Fuzz(func(t *testing.T, text string) {
		doc, err := ParseInvite(text)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			return
		}
		if doc.Schema != InviteDocumentSchema || doc.Invite.Schema != InviteSchema {
			t.Fatalf("schemas not checked: %+v", doc)
		}
		if _, err := doc.Code(); err != nil {
			t.Fatal(err)
		}
	})
}
