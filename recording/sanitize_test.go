package recording

import (
	"bytes"
	"fmt"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// TestSanitizeDetectors holds each detector of pii-default to what it replaces and what
// it leaves.
func TestSanitizeDetectors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want, rule string }{
		{"mail ann.lee+x@mail.example.co.uk now", "mail [REDACTED] now", "email"},
		{"call +44 20 7946 0958", "call [REDACTED]", "phone"},
		{"call (020) 7946-0958", "call [REDACTED]", "phone"},
		{"order 12 34 56", "order 12 34 56", ""}, // 6 digits: not a phone
		{"from 192.168.1.20:443", "from [REDACTED]:443", "ipAddress"},
		{"version 1.2.3.4567", "version 1.2.3.4567", ""}, // 4567 is no octet
		{"card 4111 1111 1111 1111 ok", "card [REDACTED] ok", "creditCard"},
		{"card 4111 1111 1111 1112 ok", "card 4111 1111 1111 1112 ok", ""}, // fails Luhn
		{"id 0000000000000000", "id 0000000000000000", ""},                 // one digit only
		{"Authorization: Bearer eyJhbGciOi.x-y", "[REDACTED]", "credential"},
		{"token is Bearer eyJhbGciOi.x-y", "token is [REDACTED]", "credential"},
		{"api_key=abc123, next", "[REDACTED], next", "credential"},
		{"key sk-abcdefghijklmnop", "key [REDACTED]", "credential"},
	} {
		s := newSanitizer(time.Unix(0, 0))
		if got := s.text(tc.in, false); got != tc.want {
			t.Errorf("%q → %q, want %q", tc.in, got, tc.want)
		}
		if tc.rule != "" && s.report.RedactionsByRule[tc.rule] == 0 {
			t.Errorf("%q: rule %s not counted (%v)", tc.in, tc.rule, s.report.RedactionsByRule)
		}
	}
}

// TestSanitizeJSONPolicy: sensitive properties and inputs are replaced whole, id-like
// members are never touched, "iphone" is no phone, JSON inside strings is sanitised.
func TestSanitizeJSONPolicy(t *testing.T) {
	t.Parallel()
	in := `{"sessionId":"ann@example.com","clientName":"Ann's Pixel","user":{"firstName":"Ann","Date_Of-Birth":"1990-01-01"},` +
		`"nodes":[{"id":"login.password","text":"hunter2","label":"Password","bounds":{"x":1}},` +
		`{"automationId":"pin","isPassword":true,"value":"4321","children":[{"text":"4"}]},` +
		`{"automationId":"iphone","text":"iPhone 15"},{"role":"button","text":"Sign in"}],` +
		`"payload":"{\"token\":\"t-1\",\"note\":\"hi\"}","headers":[{"name":"X","value":"Bearer abcdef"}]}`
	s := newSanitizer(time.Unix(0, 0))
	out := string(s.json(jsontext.Value(in), false))
	for _, want := range []string{`"sessionId":"ann@example.com"`, `"clientName":"[REDACTED]"`, `"firstName":"[REDACTED]"`, `"Date_Of-Birth":"[REDACTED]"`,
		`"id":"login.password","text":"[REDACTED]","label":"[REDACTED]"`, `"value":"[REDACTED]","children":[{"text":"[REDACTED]"}]`,
		`{"automationId":"iphone","text":"iPhone 15"}`, `{"role":"button","text":"Sign in"}`,
		`"payload":"{\"token\":\"[REDACTED]\",\"note\":\"hi\"}"`, `"value":"[REDACTED]"}]`} {
		if !strings.Contains(out, want) {
			t.Errorf("sanitised JSON lacks %s:\n%s", want, out)
		}
	}
	if s.report.SensitivePropertiesRedacted != 8 || s.report.RedactionsByRule["credential"] != 1 {
		t.Errorf("report %+v", s.report)
	}
}

// signInRecording records the demo's sign-in shape: a tree of a login screen, a frame of
// it, taps on the password field and on the button, a frame long after any tree, a log
// line and a request with personal data, a text and a binary artifact.
func signInRecording(t *testing.T, r *Recorder) string {
	t.Helper()
	const sess = "com-example-login-001"
	at := time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)
	ms := func(d time.Duration) string { return at.Add(d).Format(time.RFC3339Nano) }
	r.RecordSession(sess, "connected", at, []byte(`{"id":"com-example-login-001","appId":"com.example.login","deviceName":"Ann's laptop","state":"connected"}`))
	r.RecordMessage(sess, transport.MessageText, []byte(`{"type":"CLIENT_VISUAL_TREE","capturedAtUtc":"`+ms(time.Second)+`","source":"sdk.touchCapture","snapshotId":"s1","payload":`+officialTree+`}`), at)
	frame := func(d time.Duration) []byte {
		f, _ := wire.AppendASJP(nil, wire.ASJPFrame{Format: 1, Quality: 90, CapturedAt: at.Add(d), Width: 108, Height: 240, JPEG: testJPEGSize(t, 108, 240)})
		return f
	}
	r.RecordMessage(sess, transport.MessageBinary, frame(1200*time.Millisecond), at)
	r.RecordMessage(sess, transport.MessageBinary, frame(30*time.Second), at)
	r.RecordMessage(sess, transport.MessageText, []byte(`{"type":"CLIENT_TOUCH_INPUT","schema":"ansight.touches.v1","t0":"`+ms(1100*time.Millisecond)+
		`","space":"w","unit":"px","surface":[108,240,1],"rows":[[0,0,1,50,90],[40,2,1,50,90],[400,0,1,50,130],[440,2,1,50,130]]}`), at)
	r.RecordMessage(sess, transport.MessageText, []byte(`{"type":"CLIENT_TOUCH_INPUT","schema":"ansight.touches.v1","t0":"`+ms(40*time.Second)+
		`","space":"w","unit":"px","surface":[108,240,1],"rows":[[0,0,1,50,90]]}`), at)
	r.RecordControl(sess, "client.log", []byte(`{"data":"signed in as ann@example.com from 10.1.2.3"}`), true, "", at.Add(2*time.Second))
	r.RecordMessage(sess, transport.MessageText, []byte(`{"type":"CLIENT_NETWORK_REQUEST","request":{"schema":"ansight.network-request.v1","id":"q1",`+
		`"method":"POST","url":"https://id.example.com/login","startedAtUtc":"`+ms(1500*time.Millisecond)+`","statusCode":200,`+
		`"requestBody":{"encoding":"utf-8","data":"{\"username\":\"ann\",\"password\":\"hunter2\"}","capturedBytes":40,"truncated":false}}}`), at)
	dir := t.TempDir()
	text := filepath.Join(dir, "contacts.txt")
	os.WriteFile(text, []byte("Ann +44 20 7946 0958\n"), 0o600)
	bin := filepath.Join(dir, "db.sqlite")
	os.WriteFile(bin, []byte("SQLite format 3\x00hunter2"), 0o600)
	for i, p := range []string{text, bin} {
		r.RecordTraffic(wire.TrafficEvent{SessionID: sess, At: at.Add(3 * time.Second), Kind: wire.TrafficTransfer, Type: "ASFT", RequestID: fmt.Sprint("t", i),
			TransferID: fmt.Sprint("x", i), FileName: filepath.Base(p), ReceivedBytes: 20, SizeBytes: 20, Outcome: wire.TrafficOK, Path: p})
	}
	waitIdle(t, r)
	return sess
}

// TestSanitizeExport: a sanitised export, in either format, keeps no password, no tap on
// the password field and no personal data; frames are boxed where the tree says and
// blacked out where no tree can say; the report counts it all.
func TestSanitizeExport(t *testing.T) {
	t.Parallel()
	for _, format := range []string{FormatAnsight, FormatOfficial} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			r := open(t, t.TempDir(), func(o *Options) { o.MinFrameInterval = -1 })
			sess := signInRecording(t, r)
			archive := exportBytes(t, r, sess, ExportOptions{Format: format, Sanitize: true})
			z, err := openZip(bytes.NewReader(archive), int64(len(archive)), 1<<30, "")
			if err != nil {
				t.Fatal(err)
			}
			var everything bytes.Buffer
			for _, name := range z.names {
				b, _ := z.readAll(name, 1<<30)
				everything.Write(b)
				everything.WriteByte('\n')
			}
			for _, secret := range []string{"hunter2", "ann@example.com", "10.1.2.3", "7946", "Ann's"} {
				if bytes.Contains(everything.Bytes(), []byte(secret)) {
					t.Errorf("the sanitised archive holds %q", secret)
				}
			}
			b, err := z.readAll(SanitizeReportName, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			var rep SanitizeReport
			if err := json.Unmarshal(b, &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Schema != officialReportSchema || rep.PolicyID != SanitizePolicyID || rep.TouchesDropped != 2 || rep.TouchesUndecided != 1 ||
				rep.ScreenshotsRedacted != 2 || rep.ScreenshotsBlackedOut != 1 || rep.ScreenshotRegionsRedacted != 2 ||
				rep.ArtifactsSanitized != 1 || rep.ArtifactsExcluded != 1 || rep.RedactionsByRule["email"] == 0 {
				t.Errorf("report %s", b)
			}
			// Imported back, the kept touches are the button's only.
			back := open(t, t.TempDir(), nil)
			sum := importBytes(t, back, archive, ImportOptions{})
			k := byKind(all(t, back, Query{Session: sum.ID}))
			if len(k[KindTouch]) != 2 {
				t.Fatalf("%d touches kept", len(k[KindTouch]))
			}
			for _, tc := range k[KindTouch] {
				if !strings.Contains(tc.Text, "(50, 130)") {
					t.Errorf("kept a touch %s", tc.Text)
				}
			}
			frames := k[KindFrame]
			if len(frames) != 2 {
				t.Fatalf("%d frames", len(frames))
			}
			boxed, _ := jpeg.Decode(bytes.NewReader(blobOf(t, back, frames[0])))
			dark := func(x, y int) bool {
				r, g, b, _ := boxed.At(x, y).RGBA()
				return r < 0x2000 && g < 0x2000 && b < 0x2000
			}
			if !dark(50, 90) || !dark(15, 82) || dark(50, 130) || dark(50, 50) {
				t.Errorf("the password field is not boxed alone (password %v, button %v, user %v)", dark(50, 90), dark(50, 130), dark(50, 50))
			}
			out, _ := jpeg.Decode(bytes.NewReader(blobOf(t, back, frames[1])))
			for _, p := range [][2]int{{0, 0}, {54, 120}, {107, 239}} {
				if r, g, b, _ := out.At(p[0], p[1]).RGBA(); r > 0x2000 || g > 0x2000 || b > 0x2000 {
					t.Errorf("the frame no tree decides is not blacked out at %v", p)
				}
			}
		})
	}
}

// TestMaskSensitiveOnIntake: with Options.MaskSensitive, the recorder never stores the
// password's taps or an unmasked frame: frames are boxed from the session's most recent
// tree, or blacked out without one; touches on the password field or with no recent tree
// are not kept.
func TestMaskSensitiveOnIntake(t *testing.T) {
	t.Parallel()
	r := open(t, t.TempDir(), func(o *Options) { o.MinFrameInterval = -1; o.MaskSensitive = true })
	sess := signInRecording(t, r)
	k := byKind(all(t, r, Query{Session: sess}))
	if len(k[KindTouch]) != 2 {
		t.Errorf("%d touches kept", len(k[KindTouch]))
	}
	for _, tc := range k[KindTouch] {
		if !strings.Contains(tc.Text, "(50, 130)") {
			t.Errorf("kept a touch %s", tc.Text)
		}
	}
	if f := k[KindFrame]; len(f) != 2 || !strings.Contains(string(f[0].Data), `"masked":"boxed"`) || !strings.Contains(string(f[1].Data), `"masked":"blackedOut"`) {
		t.Fatalf("frames %v", f)
	}
	img, _ := jpeg.Decode(bytes.NewReader(blobOf(t, r, k[KindFrame][0])))
	if cr, cg, cb, _ := img.At(50, 90).RGBA(); cr > 0x2000 || cg > 0x2000 || cb > 0x2000 {
		t.Error("the password field is not boxed in the stored frame")
	}
	if u := r.Usage(); u.MaskedFrames != 2 || u.MaskedTouches != 3 {
		t.Errorf("usage %+v", u)
	}
}

// TestSensitiveNodes: the screen rules read trees through wire/uitree, compact v2 and
// legacy alike — a secure flag (isPassword, isSecure, secureTextEntry), a marker in the
// automation id, id, type or role, text a detector matches, properties naming a secure
// input — and a payload that is no tree decides nothing.
func TestSensitiveNodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		payload string
		want    int
		known   bool
	}{
		{"compact v2", officialTree, 1, true},
		{"legacy isSecure", `{"root":{"id":"r","type":"Window","bounds":{"x":0,"y":0,"width":100,"height":100},"children":[{"id":"a","type":"Entry","isSecure":true,"bounds":{"x":1,"y":1,"width":5,"height":5}}]}}`, 1, true},
		{"marker in the automation id", `{"root":{"id":"r","type":"Window","children":[{"id":"a","type":"Entry","automationId":"signup.emailField","bounds":{"x":1,"y":1,"width":5,"height":5}}]}}`, 1, true},
		{"text a detector matches", `{"root":{"id":"r","type":"Window","children":[{"id":"a","type":"Label","text":"ann@example.com","bounds":{"x":1,"y":1,"width":5,"height":5}}]}}`, 1, true},
		{"properties", `{"root":{"id":"r","type":"Window","children":[{"id":"a","type":"Entry","properties":{"contentType":"password"},"bounds":{"x":1,"y":1,"width":5,"height":5}}]}}`, 1, true},
		{"iphone is no phone", `{"root":{"id":"r","type":"Window","children":[{"id":"a","type":"Label","automationId":"iphone","text":"Model","bounds":{"x":1,"y":1,"width":5,"height":5}}]}}`, 0, true},
		{"not a tree", `{"hello":"world"}`, 0, false},
	} {
		_, sens, known := regionsOf(jsontext.Value(tc.payload))
		if len(sens) != tc.want || known != tc.known {
			t.Errorf("%s: %d sensitive regions (known %v), want %d (%v)", tc.name, len(sens), known, tc.want, tc.known)
		}
	}
}

// TestTypedValues: the value an agent types with ui.perform_action is replaced when the
// node it types into is sensitive, or when no recorded tree tells; a value typed into a
// node a recorded answer shows harmless is kept — in a sanitised export, and on intake
// with Options.MaskSensitive.
func TestTypedValues(t *testing.T) {
	t.Parallel()
	const snap = "native:7:abc"
	tree := strings.Replace(officialTree, `"format":`, `"snapshotId":"`+snap+`","format":`, 1)
	at := time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)
	call := func(node, value, snapshot string) []byte {
		return []byte(fmt.Sprintf(`{"toolId":"ui.perform_action","arguments":{"reference":{"source":"native","snapshotId":%q,"revision":7,"nodeId":%q},"action":"typeText","value":%q}}`,
			snapshot, node, value))
	}
	record := func(r *Recorder) string {
		const sess = "typing"
		r.RecordTraffic(wire.TrafficEvent{SessionID: sess, At: at, Kind: wire.TrafficResponse, Type: wire.TypeResult, RequestID: "q",
			ToolIDs: []string{"ui.get_visual_tree"}, Outcome: wire.TrafficOK, Payload: []byte(`{"toolId":"ui.get_visual_tree","success":true,"result":` + tree + `}`)})
		for i, c := range [][]byte{call("0.1", "hunter2", snap), call("0.2", "hello there", snap), call("0.0", "sesame", "native:1:gone")} {
			r.RecordTraffic(wire.TrafficEvent{SessionID: sess, At: at.Add(time.Second), Kind: wire.TrafficRequest, Type: wire.TypeCall,
				RequestID: fmt.Sprint("c", i), ToolIDs: []string{"ui.perform_action"}, Outcome: wire.TrafficOK, Payload: c})
		}
		waitIdle(t, r)
		return sess
	}
	check := func(what string, b []byte) {
		t.Helper()
		if bytes.Contains(b, []byte("hunter2")) || bytes.Contains(b, []byte("sesame")) || !bytes.Contains(b, []byte("hello there")) {
			t.Errorf("%s: the password or the unknown value kept, or the harmless one lost", what)
		}
	}
	r := open(t, t.TempDir(), nil)
	sess := record(r)
	for _, format := range []string{FormatAnsight, FormatOfficial} {
		archive := exportBytes(t, r, sess, ExportOptions{Format: format, Sanitize: true})
		z, _ := openZip(bytes.NewReader(archive), int64(len(archive)), 1<<30, "")
		var all bytes.Buffer
		for _, n := range z.names {
			b, _ := z.readAll(n, 1<<30)
			all.Write(b)
		}
		check(format, all.Bytes())
	}
	masked := open(t, t.TempDir(), func(o *Options) { o.MaskSensitive = true })
	sess = record(masked)
	var stored bytes.Buffer // the requests (intake masks screens and typing, not the trees' text)
	for _, rec := range all(t, masked, Query{Session: sess, Search: "tool.call"}) {
		stored.Write(rec.Data)
	}
	check("intake", stored.Bytes())
	if u := masked.Usage(); u.MaskedTyped != 2 {
		t.Errorf("usage %+v", u)
	}
}
