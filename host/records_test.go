package host

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/session"
)

// crashedProcess connects app a as one process, then drops the connection as a crash
// does (no session.complete), and returns that process's session.
func crashedProcess(t *testing.T, h *harness, a app) *Session {
	t.Helper()
	conn := h.connect(t, a)
	writeText(t, conn, sdkOpen)
	sess := h.sessionFor(t, a.appID)
	transport.Abort(conn)
	waitFor(t, "the crashed session to disconnect", func() bool { return sess.State() == StateDisconnected })
	return sess
}

// dotnetCrashHandoff is the request of the official .NET SDK (and of the official host's
// own integration test), as PairingControlEnvelope serializes it.
func dotnetCrashHandoff(id, previous, previousSession, current string) string {
	return `{"type":"CONTROL_REQ","id":"` + id + `","replyTo":null,"action":"crash.handoff","payload":{"reportId":"recovered-crash",` +
		`"targetProcessSessionId":"` + previous + `","targetSessionId":"` + previousSession + `","deliveryProcessSessionId":"` + current + `",` +
		`"report":{"schema":"ansight.crash.v1","reportId":"recovered-crash","previousProcessSessionId":"` + previous + `",` +
		`"occurredAtUtc":"2026-09-04T02:00:00Z","hostAcknowledged":false}},"success":true,"message":null}`
}

// TestCrashHandoffDotnet is issue 12.5 with the .NET SDK's request, sent twice as the
// SDK does when an answer is lost: the report is kept once, in the crashed process's
// session, on disk before the answer, and announced by an event.
func TestCrashHandoffDotnet(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	a := newApp("com.example.crash-handoff")
	crashed := crashedProcess(t, h, a)
	events, stop := h.Subscribe(16)
	defer stop()

	a.psid = "current-" + pairing.NewToken(8) // the next process of the same installation
	conn := h.connect(t, a)
	control(t, conn, sdkOpen)
	for attempt := range 2 {
		id := fmt.Sprintf("crash-handoff-%d", attempt)
		got := control(t, conn, dotnetCrashHandoff(id, crashed.processSessionID, crashed.ID(), a.psid))
		want := `{"type":"CONTROL_RESP","id":null,"replyTo":"` + id + `","action":"crash.handoff","payload":null,"success":true,"message":"Crash report retained in session '` + crashed.ID() + `'."}`
		if got != want {
			t.Fatalf("attempt %d:\n got %s\nwant %s", attempt, got, want)
		}
		list, err := h.Crashes(crashed.ID())
		if err != nil || len(list) != 1 {
			t.Fatalf("attempt %d: %d reports kept (%v)", attempt, len(list), err)
		}
	}
	list, _ := h.Crashes(crashed.ID())
	c := list[0]
	if c.ReportID != "recovered-crash" || c.ProcessSessionID != crashed.processSessionID || c.SessionID != crashed.ID() ||
		c.DeliveredBy == crashed.ID() || !c.OccurredAt.Equal(time.Date(2026, 9, 4, 2, 0, 0, 0, time.UTC)) {
		t.Fatalf("report %+v", c)
	}
	report, err := os.ReadFile(filepath.Join(c.Dir, "report.json"))
	if err != nil || string(report) != `{"schema":"ansight.crash.v1","reportId":"recovered-crash","previousProcessSessionId":"`+crashed.processSessionID+`","occurredAtUtc":"2026-09-04T02:00:00Z","hostAcknowledged":false}` {
		t.Fatalf("report.json %s (%v)", report, err)
	}
	if !strings.HasPrefix(c.Dir, filepath.Join(h.opts.Tools.ArtifactDir, crashed.ID())+string(filepath.Separator)) {
		t.Errorf("kept in %s, not in the session's directory", c.Dir)
	}
	if n := crashed.Info().CrashReports; n != 1 {
		t.Errorf("session info counts %d crash reports", n)
	}
	for ev := range events {
		if ev.Kind == EventCrashReport {
			if ev.Session != crashed || ev.Crash == nil || ev.Crash.ID != c.ID {
				t.Fatalf("event %+v", ev)
			}
			break
		}
	}
	if other, _ := h.Crashes(h.sessionFor(t, a.appID).ID()); len(other) != 0 {
		t.Errorf("the delivering session lists %d reports", len(other))
	}
}

// TestCrashHandoffLenientTime: a report whose occurredAtUtc is not RFC 3339 but one the
// official host's DateTimeOffset.TryParse reads (a space for the T) is kept, at that time.
func TestCrashHandoffLenientTime(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	a := newApp("com.example.lenient")
	crashed := crashedProcess(t, h, a)
	a.psid = "current"
	conn := h.connect(t, a)
	control(t, conn, sdkOpen)
	req := strings.Replace(dotnetCrashHandoff("c", crashed.processSessionID, crashed.ID(), a.psid), `"2026-09-04T02:00:00Z"`, `"2026-09-04 04:00:00 +02:00"`, 1)
	if got := control(t, conn, req); !strings.Contains(got, `"success":true`) {
		t.Fatalf("reply %s", got)
	}
	list, err := h.Crashes(crashed.ID())
	if err != nil || len(list) != 1 || !list[0].OccurredAt.Equal(time.Date(2026, 9, 4, 2, 0, 0, 0, time.UTC)) {
		t.Fatalf("kept %+v (%v)", list, err)
	}
}

// TestCrashHandoffKotlin: the Kotlin SDK's request, org.json escaping and all. It names as
// target session its own processSessionId (not a host session id), carries a native trace,
// and arrives before any session of the crashed process exists on this host: the report
// is kept by the delivering session, its trace decoded beside it.
func TestCrashHandoffKotlin(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	a := newApp("com.example.notes")
	conn := h.connect(t, a)
	control(t, conn, sdkOpen)
	sess := h.sessionFor(t, a.appID)
	const prev = "android.0123456789abcdef0123456789abcdef"
	trace := "Build fingerprint: 'google\\/oriole\\/oriole:14'\n#00 pc 0004f3 libc.so (abort+164)\n"
	report := `{"schema":"ansight.crash.v1","reportId":"7d2c9f1e0b3a4c5d6e7f8091a2b3c4d5","previousProcessSessionId":"` + prev + `",` +
		`"occurredAtUtc":"2026-09-04T01:59:58.123Z","detectedAtUtc":"2026-09-04T02:00:03.456Z","platform":"android","kind":"SIGNALED",` +
		`"confidence":"confirmed","candidate":{"candidateId":"c1","processSessionId":"` + prev + `","occurredAtUtc":"2026-09-04T01:59:58.100Z",` +
		`"occurredAtEpochMs":1788487198100,"runtime":"android-jvm","kind":"unhandled_exception","fatal":true,` +
		`"message":"java.lang.IllegalStateException: boom","stack":"java.lang.IllegalStateException: boom\n\tat com.example.Main.run(Main.kt:12)\n"},` +
		`"termination":{"reason":"SIGNALED","status":6},"traceBase64":"` + base64.StdEncoding.EncodeToString([]byte(trace)) + `",` +
		`"breadcrumbs":[{"capturedAtUtc":"2026-09-04T01:59:57.000Z","kind":"nav","label":"Checkout"}],"hostSessionId":"` + prev + `",` +
		`"hostId":"h","configId":"local:com.example.notes","appId":"com.example.notes","hostRequired":true,` +
		`"offlineCaptureRequired":false,"hostAcknowledged":false,"offlineCapturePersisted":false}`
	req := `{"type":"CONTROL_REQ","id":"client.9f86d081884c7d659a2feaa0c55ad015","action":"crash.handoff","payload":{"reportId":"7d2c9f1e0b3a4c5d6e7f8091a2b3c4d5",` +
		`"targetProcessSessionId":"` + prev + `","targetSessionId":"` + prev + `","deliveryProcessSessionId":"` + a.psid + `","report":` + report + `},"success":true}`
	if got := control(t, conn, req); !strings.Contains(got, `"success":true`) || !strings.Contains(got, sess.ID()) {
		t.Fatalf("reply %s", got)
	}
	list, err := h.Crashes(sess.ID())
	if err != nil || len(list) != 1 {
		t.Fatalf("%d reports (%v)", len(list), err)
	}
	c := list[0]
	if c.Platform != "android" || c.Kind != "SIGNALED" || c.Message != "java.lang.IllegalStateException: boom" || c.DeliveredBy != sess.ID() {
		t.Errorf("report %+v", c)
	}
	if b, err := os.ReadFile(filepath.Join(c.Dir, "native.trace")); err != nil || string(b) != trace {
		t.Errorf("native.trace %q (%v)", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(c.Dir, "report.json")); string(b) != report {
		t.Errorf("report.json changed: %s", b)
	}
}

// TestCrashHandoffRefused: what the official host refuses is refused with its message,
// and nothing is kept; a full session refuses more (the app keeps the report for later).
func TestCrashHandoffRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.Records.CrashReports = 1 })
	other := crashedProcess(t, h, newApp("com.example.other"))
	a := newApp("com.example.app")
	crashed := crashedProcess(t, h, a)
	a.psid = "current"
	conn := h.connect(t, a)
	good := dotnetCrashHandoff("r", crashed.processSessionID, crashed.ID(), "current")
	bigTrace := `"traceBase64":"` + base64.StdEncoding.EncodeToString(make([]byte, session.MaxCrashTraceBytes+1)) + `",`
	for _, tc := range []struct{ req, message string }{
		{strings.Replace(good, `"ansight.crash.v1"`, `"ansight.crash.v2"`, 1), "A crash handoff requires a current session and an ansight.crash.v1 report."},
		{`{"type":"CONTROL_REQ","id":"r","action":"crash.handoff","payload":{"reportId":"recovered-crash","targetProcessSessionId":"` + crashed.processSessionID +
			`","deliveryProcessSessionId":"current","report":["ansight.crash.v1"]}}`, "A crash handoff requires a current session and an ansight.crash.v1 report."},
		{strings.Replace(good, `"deliveryProcessSessionId":"current"`, `"deliveryProcessSessionId":"someone-else"`, 1), "Crash report identity does not match the handoff or delivering app."},
		{strings.Replace(good, `"reportId":"recovered-crash","previous`, `"reportId":"another","previous`, 1), "Crash report identity does not match the handoff or delivering app."},
		{strings.Replace(good, `"hostAcknowledged":false`, `"hostAcknowledged":false,"appId":"com.example.other"`, 1), "Crash report identity does not match the handoff or delivering app."},
		{strings.Replace(good, `"2026-09-04T02:00:00Z"`, `"yesterday"`, 1), "Crash report occurrence time is invalid."},
		{strings.Replace(good, `"targetSessionId":"`+crashed.ID()+`"`, `"targetSessionId":"`+other.ID()+`"`, 1), "Crash report target does not belong to this app registration and process."},
		{strings.Replace(good, `"schema":"ansight.crash.v1",`, `"schema":"ansight.crash.v1",`+bigTrace, 1), "Could not retain crash report: Crash trace exceeds 4 MiB."},
	} {
		t.Run(tc.message, func(t *testing.T) {
			resp, err := session.ParseControl([]byte(control(t, conn, tc.req)))
			if err != nil || resp.Success || resp.Message != tc.message {
				t.Errorf("%.100s…: %+v (%v), want %q", tc.req, resp, err, tc.message)
			}
		})
	}
	for _, s := range []*Session{crashed, other} {
		if list, _ := h.Crashes(s.ID()); len(list) != 0 {
			t.Fatalf("%s keeps %d reports after refusals", s.ID(), len(list))
		}
	}
	if got := control(t, conn, good); !strings.Contains(got, `"success":true`) {
		t.Fatalf("good report refused: %s", got)
	}
	second := strings.ReplaceAll(good, "recovered-crash", "second-crash")
	resp, _ := session.ParseControl([]byte(control(t, conn, second)))
	if resp.Success || !strings.Contains(resp.Message, "keeps 1 crash reports already") {
		t.Fatalf("over the limit: %+v", resp)
	}
	if _, err := h.Crashes("../../etc"); err == nil {
		t.Fatal("a path as session id was accepted")
	}
}

// annotationBundle is a bundle as the SDKs zip it: manifest.json and a screenshot.
func annotationBundle(t *testing.T, id string, screenshot int) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	w, _ := z.Create("manifest.json")
	fmt.Fprintf(w, `{"schema":"ansight.annotation.bundle.v1","annotationId":"%s","capturedAtUtc":"2026-08-13T00:00:00Z","feedback":"The total is wrong","screenshot":{"path":"screenshot.png","mimeType":"image/png","width":390,"height":844}}`, id)
	w, _ = z.CreateHeader(&zip.FileHeader{Name: "screenshot.png", Method: zip.Store})
	png := make([]byte, screenshot)
	for i := range png {
		png[i] = byte(i * 7)
	}
	w.Write(png)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sendASFT streams b as the SDKs do after the host accepted the request: 64 KiB chunks,
// then a complete frame.
func sendASFT(t *testing.T, conn transport.Conn, transferID string, b []byte) {
	t.Helper()
	seq, off := int32(0), int64(0)
	for len(b) > 0 {
		n := min(len(b), 64<<10)
		frame, err := wire.AppendFrame(nil, wire.Frame{Type: wire.FrameChunk, TransferID: transferID, Sequence: seq, Offset: off, Payload: b[:n]})
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.Write(context.Background(), transport.MessageBinary, frame); err != nil {
			t.Fatal(err)
		}
		b, seq, off = b[n:], seq+1, off+int64(n)
	}
	frame, _ := wire.AppendFrame(nil, wire.Frame{Type: wire.FrameComplete, TransferID: transferID, Sequence: seq, Offset: off})
	if err := conn.Write(context.Background(), transport.MessageBinary, frame); err != nil {
		t.Fatal(err)
	}
}

// dotnetAnnotationSubmit is the .NET SDK's request (LiveAnnotationSink with
// SendBinaryExtensionAsync's transfer object).
func dotnetAnnotationSubmit(id, guid, transferID string, size int) string {
	return `{"type":"CONTROL_REQ","id":"client.` + transferID + `","replyTo":null,"action":"annotation.submit","payload":{"schema":"ansight.annotation.submit.v1",` +
		`"clientAnnotationId":"` + id + `","capturedAtUtc":"2026-08-13T00:00:00.0000000+00:00","transfer":{"transferId":"` + transferID + `",` +
		`"fileName":"` + guid + `.ansightannotation","mimeType":"application/vnd.ansight.annotation+zip","sizeBytes":` + fmt.Sprint(size) +
		`,"chunkBytes":65536,"wireProtocol":"ansight.file-transfer.v1"}},"success":true,"message":null}`
}

// TestAnnotationSubmit is issue 12.5 for annotated feedback, as the .NET SDK sends it: the
// request, the host's acceptance, then the bundle in ASFT frames. The bundle is kept in the
// session's directory, byte for byte, and announced by an event; a second bundle whose
// transfer the app aborts leaves nothing behind.
func TestAnnotationSubmit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	a := newApp("com.example.app")
	conn := h.connect(t, a)
	control(t, conn, sdkOpen)
	sess := h.sessionFor(t, a.appID)
	events, stop := h.Subscribe(16)
	defer stop()

	const guid = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"
	id, transferID := "1b4e28ba2fa111d2883f0016d3cca427", wire.NewTransferID()
	bundle := annotationBundle(t, guid, 150_000) // three chunks
	got := control(t, conn, dotnetAnnotationSubmit(id, guid, transferID, len(bundle)))
	if want := `{"type":"CONTROL_RESP","id":null,"replyTo":"client.` + transferID + `","action":"annotation.submit","payload":null,"success":true,"message":"Annotated feedback transfer accepted."}`; got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
	sendASFT(t, conn, transferID, bundle)
	var ev Event
	for ev = range events {
		if ev.Kind == EventAnnotation {
			break
		}
	}
	if ev.Annotation == nil || ev.Session != sess || ev.Annotation.ID != id || ev.Info.Annotations != 1 {
		t.Fatalf("event %+v", ev)
	}
	list, err := h.Annotations(sess.ID())
	if err != nil || len(list) != 1 {
		t.Fatalf("%d annotations (%v)", len(list), err)
	}
	an := list[0]
	if b, err := os.ReadFile(an.Path); err != nil || !bytes.Equal(b, bundle) {
		t.Fatalf("bundle at %s: %d bytes (%v), want %d", an.Path, len(b), err, len(bundle))
	}
	if an.SizeBytes != int64(len(bundle)) || an.FileName != guid+".ansightannotation" ||
		!an.CapturedAt.Equal(time.Date(2026, 8, 13, 0, 0, 0, 0, time.UTC)) || filepath.Dir(an.Path) != filepath.Join(h.opts.Tools.ArtifactDir, sess.ID(), "annotations") {
		t.Errorf("annotation %+v", an)
	}

	// Refused as the official host refuses, before any frame.
	for _, tc := range []struct{ req, message string }{
		{strings.Replace(dotnetAnnotationSubmit(id, guid, transferID, 10), "application/vnd.ansight.annotation+zip", "application/zip", 1), "Annotated feedback transfer protocol or MIME type is unsupported."},
		{strings.Replace(dotnetAnnotationSubmit(id, guid, transferID, 10), `"clientAnnotationId":"`+id, `"clientAnnotationId":"note-1`, 1), "Annotated feedback submission is missing a valid clientAnnotationId."},
		{dotnetAnnotationSubmit(id, guid, transferID, maxAnnotationBundle+1), "Annotated feedback transfer id or size is invalid."},
		{strings.Replace(dotnetAnnotationSubmit(id, guid, transferID, 10), `.v1",`, `.v2",`, 1), "Annotated feedback submission is missing a supported schema."},
	} {
		t.Run(tc.message, func(t *testing.T) {
			resp, err := session.ParseControl([]byte(control(t, conn, tc.req)))
			if err != nil || resp.Success || resp.Message != tc.message {
				t.Errorf("%+v (%v), want %q", resp, err, tc.message)
			}
		})
	}

	// The app aborts a transfer (an ASFT error frame): nothing is kept, no event.
	second := wire.NewTransferID()
	if got := control(t, conn, dotnetAnnotationSubmit("0f"+id[2:], guid, second, 1000)); !strings.Contains(got, `"success":true`) {
		t.Fatalf("second submit: %s", got)
	}
	frame, _ := wire.AppendFrame(nil, wire.Frame{Type: wire.FrameError, TransferID: second, Payload: []byte("disk full")})
	conn.Write(context.Background(), transport.MessageBinary, frame)
	if got := control(t, conn, sdkLog); !strings.Contains(got, `"success":true`) { // the frame was handled before this
		t.Fatal(got)
	}
	if list, _ := h.Annotations(sess.ID()); len(list) != 1 {
		t.Fatalf("%d annotations after an aborted transfer", len(list))
	}
	entries, _ := os.ReadDir(filepath.Join(h.opts.Tools.ArtifactDir, sess.ID(), "annotations"))
	if len(entries) != 2 { // the bundle and its record: no partial file
		t.Errorf("annotations directory holds %d entries", len(entries))
	}
}
