package pairing

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/wire"
)

var testNow = time.Date(2026, 7, 30, 1, 0, 0, 0, time.UTC)

func testInvite() Invite {
	return Invite{
		Schema: InviteSchema, InviteID: "0123456789abcdef0123456789abcdef", AppID: "com.example.app", AppName: "Example",
		IssuedAt: testNow, ExpiresAt: testNow.Add(time.Hour), MinProtocolVersion: 2, AllowedTransports: []string{TransportWS},
		Host: InviteHost{HostID: "host-1", HostName: "box", DiscoveryPort: DefaultDiscoveryPort},
		Enrollment: InviteEnrollment{AccessToken: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", ExpiresAt: testNow.Add(time.Hour),
			GrantExpiresAt: testNow.Add(90 * 24 * time.Hour), MaxUses: 1, MaxToolPolicy: wire.PolicyRead},
	}
}

func testDocument() *InviteDocument {
	return &InviteDocument{Schema: InviteDocumentSchema, Invite: testInvite(), Discovery: &DiscoveryHint{
		Schema: DiscoveryHintSchema, Source: "cli-code", HostAddresses: []string{"192.168.1.20"},
		DiscoveryPort: DefaultDiscoveryPort, HostName: "box", CapturedAt: testNow}}
}

func TestInviteDocumentJSON(t *testing.T) {
	t.Parallel()
	b, err := encode(testDocument())
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"schema":"ansight.enrollment-invite-document.v2","invite":{"schema":"ansight.enrollment-invite.v2","inviteId":"0123456789abcdef0123456789abcdef","appId":"com.example.app","appName":"Example","issuedAt":"2026-07-30T01:00:00Z","expiresAt":"2026-07-30T02:00:00Z","minProtocolVersion":2,"allowedTransports":["ws"],"host":{"hostId":"host-1","hostName":"box","discoveryPort":45123},"enrollment":{"accessToken":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8","expiresAt":"2026-07-30T02:00:00Z","grantExpiresAt":"2026-10-28T01:00:00Z","maxUses":1,"maxToolPolicy":"read"}},"discovery":{"schema":"ansight.discovery-hint.v1","source":"cli-code","hostAddresses":["192.168.1.20"],"discoveryPort":45123,"hostName":"box","wifiName":null,"capturedAt":"2026-07-30T01:00:00Z"}}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}

func TestInviteCodeRoundTrip(t *testing.T) {
	t.Parallel()
	doc := testDocument()
	code, err := doc.Code()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(code, CodePrefix) || strings.ContainsAny(code[len(CodePrefix):], "+/=") {
		t.Fatalf("code %q is not ans2: + unpadded base64url", code)
	}
	for name, text := range map[string]string{
		"code":        code,
		"padded code": code + strings.Repeat("=", (4-len(code[len(CodePrefix):])%4)%4),
		"spaced code": "  \n" + code + "\n",
	} {
		got, err := ParseInvite(text)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.Invite.InviteID != doc.Invite.InviteID || got.Discovery == nil || got.Discovery.HostAddresses[0] != "192.168.1.20" {
			t.Fatalf("%s: %+v", name, got)
		}
		if err := got.Invite.Check("com.example.app", testNow); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	// C#-style timestamps with 7 fractional digits and an explicit offset parse too.
	js, _ := encode(doc)
	js = bytes.ReplaceAll(js, []byte(`"2026-07-30T01:00:00Z"`), []byte(`"2026-07-30T01:00:00.1234567+00:00"`))
	if _, err := ParseInvite(string(js)); err != nil {
		t.Fatalf("document JSON: %v", err)
	}
	bare, _ := encode(doc.Invite)
	got, err := ParseInvite(string(bare))
	if err != nil || got.Discovery != nil || got.Schema != InviteDocumentSchema {
		t.Fatalf("bare invite: %+v %v", got, err)
	}
}

func gzipB64(t *testing.T, data []byte) string {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	zw.Close()
	return base64.RawURLEncoding.EncodeToString(buf.Bytes())
}

func TestParseInviteMalformed(t *testing.T) {
	t.Parallel()
	code, _ := testDocument().Code()
	bare, _ := encode(testInvite())
	noDiscoverySchema, _ := encode(testDocument())
	noDiscoverySchema = bytes.Replace(noDiscoverySchema, []byte(`"schema":"ansight.discovery-hint.v1",`), nil, 1)
	for name, text := range map[string]string{
		"empty":               "",
		"upper prefix":        "ANS2:" + code[len(CodePrefix):],
		"v1 prefix":           "ans1:" + code[len(CodePrefix):],
		"bad base64":          "ans2:!!!",
		"not gzip":            "ans2:" + base64.RawURLEncoding.EncodeToString([]byte("plain")),
		"truncated gzip":      code[:len(code)-10],
		"bomb":                "ans2:" + gzipB64(t, bytes.Repeat([]byte(" "), MaxDocumentBytes+1)),
		"bare invite code":    "ans2:" + gzipB64(t, bare),
		"wrong schema":        `{"schema":"ansight.pairing-config.v1"}`,
		"too long":            "ans2:" + strings.Repeat("A", MaxCodeLength),
		"dup key":             `{"schema":"ansight.enrollment-invite.v2","schema":"ansight.enrollment-invite.v2"}`,
		"no discovery schema": string(noDiscoverySchema),
		"port string":         strings.Replace(string(bare), `"discoveryPort":45123`, `"discoveryPort":"45123"`, 1),
	} {
		if _, err := ParseInvite(text); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

func TestInviteCheck(t *testing.T) {
	t.Parallel()
	cases := map[string]func(*Invite){
		"schema":       func(i *Invite) { i.Schema = "x" },
		"no inviteId":  func(i *Invite) { i.InviteID = " " },
		"other app":    func(i *Invite) { i.AppID = "com.other" },
		"no appName":   func(i *Invite) { i.AppName = "" },
		"version":      func(i *Invite) { i.MinProtocolVersion = 3 },
		"transports":   func(i *Invite) { i.AllowedTransports = []string{"ws", "wss"} },
		"port":         func(i *Invite) { i.Host.DiscoveryPort = 0 },
		"maxUses":      func(i *Invite) { i.Enrollment.MaxUses = 2 },
		"policy":       func(i *Invite) { i.Enrollment.MaxToolPolicy = "admin" },
		"grant over":   func(i *Invite) { i.Enrollment.GrantExpiresAt = testNow },
		"short secret": func(i *Invite) { i.Enrollment.AccessToken = NewToken(16) },
	}
	for name, mutate := range cases {
		inv := testInvite()
		mutate(&inv)
		if err := inv.Check("com.example.app", testNow); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	inv := testInvite()
	inv.AppID = AnyApp
	inv.ExpiresAt = testNow.Add(-time.Hour) // the invite's own expiry is not the SDK's business
	if err := inv.Check("com.whatever", testNow); err != nil {
		t.Errorf("any-app invite: %v", err)
	}
}
