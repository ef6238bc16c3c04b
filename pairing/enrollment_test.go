package pairing

import (
	"errors"
	"strings"
	"testing"
)

// Datagrams as the official SDKs write them (docs/protocol/session.md#connect-datagram).
const (
	dotnetConnect  = `{"type":"ENROLLMENT_CONNECT","ver":2,"requestId":"q1w2e3r4t5y6u7i8o9p0aa","enrollmentMode":"local","inviteId":"local:com.example.app","appId":"com.example.app","deviceId":"Zm9vYmFyYmF6cXV4cXV1eA","deviceName":"Dev Laptop","accessToken":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8","processSessionId":"0f1e2d3c4b5a69788796a5b4c3d2e1f0"}`
	kotlinConnect  = `{"type":"ENROLLMENT_CONNECT","ver":2,"requestId":"6f1c2b3a4d5e4f60718293a4b5c6d7e8","enrollmentMode":"invite","inviteId":"0123456789abcdef0123456789abcdef","appId":"com.example.app","deviceId":"android.00112233445566778899aabbccddeeff","deviceName":"Pixel 8","accessToken":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"}`
	cliTestConnect = `{"type":"ENROLLMENT_CONNECT","ver":2,"requestId":"r","enrollmentMode":"local","inviteId":"","appId":"com.example.app","deviceId":"d","deviceName":null,"accessToken":"t","processSessionId":null}`
)

func TestParseEnrollmentConnectOfficial(t *testing.T) {
	t.Parallel()
	c, err := ParseEnrollmentConnect([]byte(dotnetConnect))
	if err != nil {
		t.Fatal(err)
	}
	want := EnrollmentConnect{RequestID: "q1w2e3r4t5y6u7i8o9p0aa", EnrollmentMode: ModeLocal, InviteID: "local:com.example.app",
		AppID: "com.example.app", DeviceID: "Zm9vYmFyYmF6cXV4cXV1eA", DeviceName: "Dev Laptop",
		AccessToken: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", ProcessSessionID: "0f1e2d3c4b5a69788796a5b4c3d2e1f0"}
	if *c != want {
		t.Fatalf("got %+v\nwant %+v", *c, want)
	}
	k, err := ParseEnrollmentConnect([]byte(kotlinConnect))
	if err != nil {
		t.Fatal(err)
	}
	if k.ProcessSessionID != "" || k.Mode() != ModeInvite {
		t.Errorf("kotlin: %+v", k)
	}
	n, err := ParseEnrollmentConnect([]byte(cliTestConnect))
	if err != nil {
		t.Fatal(err)
	}
	if n.DeviceName != "" || NormalizeDeviceName(n.DeviceName) != DefaultDeviceName {
		t.Errorf("null deviceName: %+v", n)
	}
}

func TestParseEnrollmentConnectMalformed(t *testing.T) {
	t.Parallel()
	base := `"requestId":"r","inviteId":"i","appId":"a","deviceId":"d","deviceName":"n","accessToken":"t"`
	cases := map[string]string{
		"not json":             `hello`,
		"array":                `[]`,
		"empty object":         `{}`,
		"no type":              `{"ver":2,` + base + `}`,
		"wrong type":           `{"type":"ENROLLMENT_RESULT","ver":2,` + base + `}`,
		"type case":            `{"type":"enrollment_connect","ver":2,` + base + `}`,
		"type number":          `{"type":1,"ver":2,` + base + `}`,
		"ver string":           `{"type":"ENROLLMENT_CONNECT","ver":"2",` + base + `}`,
		"ver 1":                `{"type":"ENROLLMENT_CONNECT","ver":1,` + base + `}`,
		"ver 2.0":              `{"type":"ENROLLMENT_CONNECT","ver":2.0,` + base + `}`,
		"no ver":               `{"type":"ENROLLMENT_CONNECT",` + base + `}`,
		"no requestId":         `{"type":"ENROLLMENT_CONNECT","ver":2,"inviteId":"i","appId":"a","deviceId":"d","deviceName":"n","accessToken":"t"}`,
		"blank requestId":      `{"type":"ENROLLMENT_CONNECT","ver":2,` + strings.Replace(base, `"r"`, `"  "`, 1) + `}`,
		"null requestId":       `{"type":"ENROLLMENT_CONNECT","ver":2,` + strings.Replace(base, `"r"`, `null`, 1) + `}`,
		"no inviteId":          `{"type":"ENROLLMENT_CONNECT","ver":2,"requestId":"r","appId":"a","deviceId":"d","deviceName":"n","accessToken":"t"}`,
		"no deviceName":        `{"type":"ENROLLMENT_CONNECT","ver":2,"requestId":"r","inviteId":"i","appId":"a","deviceId":"d","accessToken":"t"}`,
		"no accessToken":       `{"type":"ENROLLMENT_CONNECT","ver":2,"requestId":"r","inviteId":"i","appId":"a","deviceId":"d","deviceName":"n"}`,
		"appId number":         `{"type":"ENROLLMENT_CONNECT","ver":2,` + strings.Replace(base, `"a"`, `7`, 1) + `}`,
		"mode number":          `{"type":"ENROLLMENT_CONNECT","ver":2,"enrollmentMode":1,` + base + `}`,
		"duplicate appId":      `{"type":"ENROLLMENT_CONNECT","ver":2,"appId":"x",` + base + `}`,
		"processSessionId obj": `{"type":"ENROLLMENT_CONNECT","ver":2,"processSessionId":{},` + base + `}`,
		"oversized field":      `{"type":"ENROLLMENT_CONNECT","ver":2,` + strings.Replace(base, `"a"`, `"`+strings.Repeat("a", MaxFieldLength+1)+`"`, 1) + `}`,
		"oversized datagram":   `{"type":"ENROLLMENT_CONNECT","ver":2,"pad":"` + strings.Repeat("x", MaxDatagramBytes) + `",` + base + `}`,
		"trailing garbage":     `{"type":"ENROLLMENT_CONNECT","ver":2,` + base + `}x`,
		"invalid utf8":         "{\"type\":\"ENROLLMENT_CONNECT\",\"ver\":2," + strings.Replace(base, `"a"`, "\"\xff\"", 1) + "}",
	}
	// Refused, but answerable by requestId: only a duplicate or case-variant name, invalid
	// UTF-8 or an over-long string is wrong.
	answerable := map[string]Reason{
		"duplicate appId": ReasonEnrollmentRequired, "oversized field": ReasonEnrollmentRequired,
		"invalid utf8": ReasonEnrollmentRequired,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := ParseEnrollmentConnect([]byte(in))
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("got %+v, %v; want ErrMalformed", c, err)
			}
			want, ok := answerable[name]
			switch {
			case ok && c == nil:
				t.Fatalf("%v: not answerable", err)
			case !ok && c != nil:
				t.Fatalf("%v: answerable as %+v", err, c)
			case ok:
				if r, _ := c.Refusal(); r != want || c.RequestID != "r" {
					t.Fatalf("refusal %s for %q, want %s for r", r, c.RequestID, want)
				}
			}
		})
	}
	// Unknown members are tolerated: SDKs add fields between versions.
	if _, err := ParseEnrollmentConnect([]byte(`{"type":"ENROLLMENT_CONNECT","ver":2,"extra":[1],` + base + `}`)); err != nil {
		t.Errorf("unknown member: %v", err)
	}
}

// TestEnrollmentConnectLenient: what the official host answers rather than ignores, the
// exact datagrams of issue 12.6 and 19.7.
func TestEnrollmentConnectLenient(t *testing.T) {
	t.Parallel()
	nullMode := strings.Replace(dotnetConnect, `"enrollmentMode":"local"`, `"enrollmentMode":null`, 1)
	emptyMode := strings.Replace(dotnetConnect, `"enrollmentMode":"local"`, `"enrollmentMode":""`, 1)
	for _, in := range []string{nullMode, emptyMode} {
		c, err := ParseEnrollmentConnect([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if c.Mode() != "" {
			t.Errorf("%s: mode %q, want none (EnrollmentModeUnsupported), not invite", in, c.Mode())
		}
		if b, _ := c.Marshal(); strings.Contains(string(b), `"invite"`) {
			t.Errorf("re-marshaled as invite: %s", b)
		}
	}

	// A device name is display text: a long one is cut to 120 characters, not a reason to
	// drop the request (the official host cuts it too).
	long := strings.Repeat("Pixel 9 Pro XL — ", 40) // 680 characters, 760 bytes
	c, err := ParseEnrollmentConnect([]byte(strings.Replace(kotlinConnect, `"Pixel 8"`, `"`+long+`"`, 1)))
	if err != nil {
		t.Fatalf("long deviceName: %v", err)
	}
	if n := NormalizeDeviceName(c.DeviceName); len([]rune(n)) != MaxDeviceNameLength || !strings.HasPrefix(long, n) {
		t.Errorf("normalized to %q", n)
	}

	// Answered with a reason in the request's mode.
	for _, tc := range []struct {
		in   string
		want Reason
	}{
		{strings.Replace(dotnetConnect, `"appId":"com.example.app"`, `"appId":"com.example.app","appId":"com.bank.app"`, 1), ReasonLocalEnrollmentInvalid},
		{strings.Replace(kotlinConnect, `"deviceId":`, `"DeviceId":"x","deviceId":`, 1), ReasonEnrollmentRequired},
		{strings.Replace(kotlinConnect, `"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"`, `"`+strings.Repeat("A", 600)+`"`, 1), ReasonEnrollmentRequired},
		{strings.Replace(nullMode, `"appId":"com.example.app"`, `"appId":"com.example.app","appId":"x"`, 1), ReasonEnrollmentModeUnsupported},
	} {
		t.Run(string(tc.want), func(t *testing.T) {
			t.Parallel()
			c, err := ParseEnrollmentConnect([]byte(tc.in))
			if err == nil || c == nil {
				t.Fatalf("%s: %+v, %v; want an answerable refusal", tc.in, c, err)
			}
			if r, msg := c.Refusal(); r != tc.want || !strings.HasPrefix(msg, "Malformed enrollment request: ") {
				t.Errorf("%.80s…: %s %q, want %s", tc.in, r, msg, tc.want)
			}
		})
	}
	// Never answerable: which request, or whether one, is not certain.
	for _, in := range []string{
		strings.Replace(kotlinConnect, `"requestId":"6f1c`, `"requestId":"a","requestId":"6f1c`, 1),
		strings.Replace(kotlinConnect, `"ver":2`, `"ver":2,"ver":2`, 1),
		strings.Replace(kotlinConnect, `"appId":"com.example.app"`, `"appId":"com.example.app","appId":"x","x":`+strings.Repeat("[", 20)+strings.Repeat("]", 20), 1),
		strings.Replace(kotlinConnect, `"6f1c2b3a4d5e4f60718293a4b5c6d7e8"`, `"`+strings.Repeat("r", MaxFieldLength+1)+`"`, 1),
		strings.Replace(kotlinConnect, `"appId":"com.example.app"`, `"appId":"com.example.app","appId":"x"`, 1) + `{`,
	} {
		if c, err := ParseEnrollmentConnect([]byte(in)); err == nil || c != nil {
			t.Errorf("%.90s…: %+v, %v; want unanswerable", in, c, err)
		}
	}
}

func TestEnrollmentConnectMarshal(t *testing.T) {
	t.Parallel()
	c := EnrollmentConnect{RequestID: "r", InviteID: "local:a", AppID: "a", DeviceID: "d", DeviceName: "n", AccessToken: "t"}
	b, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"type":"ENROLLMENT_CONNECT","ver":2,"requestId":"r","enrollmentMode":"invite","inviteId":"local:a","appId":"a","deviceId":"d","deviceName":"n","accessToken":"t","processSessionId":null}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	back, err := ParseEnrollmentConnect(b)
	if err != nil || back.AppID != "a" || back.Mode() != ModeInvite {
		t.Fatalf("round trip: %+v %v", back, err)
	}
}

func TestEnrollmentResultMarshal(t *testing.T) {
	t.Parallel()
	accept := EnrollmentResult{RequestID: "r", Accepted: true, Reason: ReasonOK, ReasonMessage: ReasonOK.Text(),
		HostID: "h", HostName: "box", Message: "Connection accepted. WebSocket issued on port 56501.",
		WebSocketPort: 56501, WebSocketPath: WebSocketPath, WebSocketToken: "tok"}
	reject := EnrollmentResult{RequestID: "r", Reason: ReasonEnrollmentConsumed, ReasonMessage: "used",
		HostID: "h", HostName: "box", Message: "used"}
	for _, tc := range []struct {
		r    EnrollmentResult
		want string
	}{
		{accept, `{"type":"ENROLLMENT_RESULT","ver":2,"requestId":"r","accepted":true,"reason":"Ok","reasonMessage":"Device registered.","hostId":"h","hostName":"box","hostWifiName":null,"message":"Connection accepted. WebSocket issued on port 56501.","webSocketPort":56501,"webSocketPath":"/ws","webSocketToken":"tok"}`},
		{reject, `{"type":"ENROLLMENT_RESULT","ver":2,"requestId":"r","accepted":false,"reason":"EnrollmentConsumed","reasonMessage":"used","hostId":"h","hostName":"box","hostWifiName":null,"message":"used","webSocketPort":null,"webSocketPath":null,"webSocketToken":null}`},
		// Required strings stay non-null even when empty (Swift's non-optional Codable).
		{EnrollmentResult{RequestID: "r"}, `{"type":"ENROLLMENT_RESULT","ver":2,"requestId":"r","accepted":false,"reason":"","reasonMessage":null,"hostId":"","hostName":"","hostWifiName":null,"message":"","webSocketPort":null,"webSocketPath":null,"webSocketToken":null}`},
	} {
		t.Run(string(tc.r.Reason), func(t *testing.T) {
			t.Parallel()
			b, err := tc.r.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("got  %s\nwant %s", b, tc.want)
			}
		})
	}
	for _, r := range []EnrollmentResult{accept, reject} {
		b, _ := r.Marshal()
		back, err := ParseEnrollmentResult(b)
		if err != nil {
			t.Fatal(err)
		}
		if *back != r {
			t.Errorf("round trip: %+v != %+v", *back, r)
		}
	}
}

func TestParseEnrollmentResultMalformed(t *testing.T) {
	t.Parallel()
	ok := `{"type":"ENROLLMENT_RESULT","ver":2,"requestId":"r","accepted":true,"reason":"Ok","reasonMessage":null,"hostId":"h","hostName":"n","hostWifiName":null,"message":"m","webSocketPort":1,"webSocketPath":"/ws","webSocketToken":"t"}`
	if _, err := ParseEnrollmentResult([]byte(ok)); err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]string{
		"no hostId":     strings.Replace(ok, `"hostId":"h",`, ``, 1),
		"null message":  strings.Replace(ok, `"message":"m"`, `"message":null`, 1),
		"ver 1":         strings.Replace(ok, `"ver":2`, `"ver":1`, 1),
		"accepted str":  strings.Replace(ok, `"accepted":true`, `"accepted":"true"`, 1),
		"no port":       strings.Replace(ok, `"webSocketPort":1`, `"webSocketPort":null`, 1),
		"port too big":  strings.Replace(ok, `"webSocketPort":1`, `"webSocketPort":70000`, 1),
		"blank token":   strings.Replace(ok, `"webSocketToken":"t"`, `"webSocketToken":" "`, 1),
		"wrong type":    strings.Replace(ok, `ENROLLMENT_RESULT`, `ENROLLMENT_CONNECT`, 1),
		"reason number": strings.Replace(ok, `"reason":"Ok"`, `"reason":0`, 1),
	} {
		if _, err := ParseEnrollmentResult([]byte(in)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

func TestNormalizeDeviceName(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 130)
	for in, want := range map[string]string{"": "Device", "  ": "Device", " Pixel ": "Pixel", long: strings.Repeat("é", 120)} {
		if got := NormalizeDeviceName(in); got != want {
			t.Errorf("NormalizeDeviceName(%q) = %q, want %q", in, got, want)
		}
	}
}
