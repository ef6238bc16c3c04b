package recording_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/app/telemetry"
	"github.com/ansight-go/ansight/app/ui"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/examples/notes"
	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/recording"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/session"
)

// Control requests exactly as the official .NET SDK sends them (docs/protocol/session.md#control-actions).
var officialControl = []string{
	`{"type":"CONTROL_REQ","id":"client.0123456789abcdef0123456789abcdef","replyTo":null,"action":"session.open","payload":{"clientName":"Pixel 8","configId":"local:com.example.app","appId":"com.example.app","openedAtUtc":"2026-07-30T01:00:00.0000000+00:00"},"success":true,"message":null}`,
	`{"type":"CONTROL_REQ","id":"client.1","replyTo":null,"action":"device.profile","payload":{"type":"DeviceAppProfile","schema":"ansight.device-app-profile.v1","sentAt":1785373200000,"reasonCode":1,"profileSeq":1,"sdk":{"name":"Ansight.Core","packageId":"Ansight.Core","version":"1.4.0","language":"csharp"},"device":{"model":"Pixel 8","osName":"Android","osVersion":"15","apiLevel":35},"app":{"appId":"com.example.app","versionCode":42},"sessionJpegCaptureControlVersion":1},"success":true,"message":null}`,
	`{"type":"CONTROL_REQ","id":"client.2","replyTo":null,"action":"app.state","payload":{"state":"Foreground","changedAtUtc":"2026-07-30T01:00:01Z"},"success":true,"message":null}`,
	`{"type":"CONTROL_REQ","id":"client.3","action":"session.properties","payload":{"schema":"ansight.session-properties.v1","customProperties":{"build":{"flavor":"debug"}},"updatedAtUtc":"2026-07-30T01:00:02Z","platform":"android"},"success":true}`,
	`{"type":"CONTROL_REQ","id":"client.4","action":"client.log","payload":{"data":"[Error] payment declined"},"success":true}`,
	`{"type":"CONTROL_REQ","id":"client.6","action":"crash.handoff","payload":{"reportId":"6f914d7bdca928cfbf6e9691aefa0a42","targetProcessSessionId":"process_that_crashed","deliveryProcessSessionId":"recovering_process","report":{"schema":"ansight.crash.v1","reportId":"6f914d7bdca928cfbf6e9691aefa0a42","platform":"android","kind":"native_crash","confidence":"confirmed","occurredAtUtc":"2026-08-13T00:00:00.000Z","traceBase64":"dHJhY2U="}}}`,
}

func openRecorder(t *testing.T, dir string) *recording.Recorder {
	t.Helper()
	rec, err := recording.Open(recording.Options{Dir: dir, MinFrameInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	return rec
}

func startHost(t *testing.T, rec host.Recorder, mutate ...func(*host.Options)) *host.Server {
	t.Helper()
	opts := host.Options{DiscoveryAddr: "127.0.0.1:0", ListenAddr: "127.0.0.1:0", Recorder: rec,
		KeepAlive: transport.KeepAlive{Interval: -1}}
	for _, m := range mutate {
		m(&opts)
	}
	srv, err := host.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// enrollAndDial enrolls a local app over real UDP and opens its WebSocket.
func enrollAndDial(t *testing.T, srv *host.Server, appID string) transport.Conn {
	t.Helper()
	return enrollProcess(t, srv, appID, pairing.NewToken(16))
}

// enrollProcess is enrollAndDial for the app process processSessionID.
func enrollProcess(t *testing.T, srv *host.Server, appID, processSessionID string) transport.Conn {
	t.Helper()
	req := &pairing.EnrollmentConnect{RequestID: pairing.NewToken(16), EnrollmentMode: pairing.ModeLocal,
		InviteID: pairing.LocalInviteID(appID), AppID: appID, DeviceID: "dev-" + pairing.NewToken(6), DeviceName: "Pixel 8",
		AccessToken: pairing.NewToken(32), ProcessSessionID: processSessionID}
	b, err := req.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(srv.DiscoveryAddr()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Time{})
	buf := make([]byte, 64<<10)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	res, err := pairing.ParseEnrollmentResult(buf[:n])
	if err != nil || !res.Accepted {
		t.Fatalf("enrollment: %+v, %v", res, err)
	}
	url := fmt.Sprintf("ws://127.0.0.1:%d%s?token=%s", res.WebSocketPort, res.WebSocketPath, res.WebSocketToken)
	conn, err := transport.Dial(context.Background(), url, transport.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(transport.StatusNormalClosure, "") })
	return conn
}

func jpegBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h)), &jpeg.Options{Quality: 60}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// replayApp is the app side of a replay: a real tool runtime serving the connection, with
// the control responses it receives handed to the test.
type replayApp struct {
	conn    transport.Conn
	replies chan []byte
	served  chan error
}

func serveReplay(t *testing.T, conn transport.Conn) *replayApp {
	t.Helper()
	a := notesApp(t)
	ra := &replayApp{conn: conn, replies: make(chan []byte, 64), served: make(chan error, 1)}
	go func() {
		ra.served <- a.Serve(t.Context(), conn, app.ServeOptions{OnMessage: func(typ transport.MessageType, data []byte) {
			if typ == transport.MessageText && bytes.Contains(data, []byte(`"CONTROL_RESP"`)) {
				ra.replies <- data
			}
		}})
	}()
	return ra
}

// notesApp is a tool runtime with a read tool (notes.count) and a critical one
// (notes.purge).
func notesApp(t *testing.T) *app.App {
	t.Helper()
	a := app.New(app.Options{})
	type countOut struct {
		Count int `json:"count"`
	}
	if err := app.Register(a, catalog.Definition{ID: "notes.count", Name: "Count notes", Description: "Counts the notes.",
		Category: "notes", Policy: wire.PolicyRead}, func(context.Context, *app.Call, struct{}) (countOut, error) {
		return countOut{Count: 3}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := app.Register(a, catalog.Definition{ID: "notes.purge", Name: "Purge notes", Description: "Deletes every note.",
		Category: "notes", Policy: wire.PolicyCritical}, func(context.Context, *app.Call, struct{}) (countOut, error) {
		return countOut{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return a
}

func (ra *replayApp) send(t *testing.T, typ transport.MessageType, data []byte) {
	t.Helper()
	if err := ra.conn.Write(context.Background(), typ, data); err != nil {
		t.Fatal(err)
	}
}

func (ra *replayApp) control(t *testing.T, req string) string {
	t.Helper()
	ra.send(t, transport.MessageText, []byte(req))
	select {
	case b := <-ra.replies:
		return string(b)
	case <-t.Context().Done():
		t.Fatalf("no reply to %.60s", req)
		return ""
	}
}

func telemetryLines(t *testing.T) [][]byte { return recording.OfficialLines(t) }

// TestHostRecordsOfficialSession replays an official SDK's session into our host over a
// real WebSocket — the control handshake, every telemetry message in its exact shape,
// ASJP frames, tool calls (one denied) — restarts the recorder, and reads every kind back
// through the query API.
func TestHostRecordsOfficialSession(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := openRecorder(t, dir)
	srv := startHost(t, rec)
	conn := enrollAndDial(t, srv, "com.example.app")
	ra := serveReplay(t, conn)

	for _, req := range officialControl {
		if resp := ra.control(t, req); !strings.Contains(resp, `"CONTROL_RESP"`) {
			t.Fatalf("reply %s", resp)
		}
	}
	// CLIENT_DONE ends the session (as on the official host), so it is replayed last.
	var done []byte
	for _, line := range telemetryLines(t) {
		if bytes.Contains(line, []byte(`"CLIENT_DONE"`)) {
			done = line
			continue
		}
		ra.send(t, transport.MessageText, line)
	}
	img := jpegBytes(t, 32, 64)
	capturedAt := time.Date(2026, 7, 30, 1, 0, 3, 0, time.UTC)
	for i := range 3 {
		frame, err := wire.AppendASJP(nil, wire.ASJPFrame{Format: wire.ASJPFormatJPEG, Quality: 60, Flags: wire.ASJPFlagKeyboardKnown,
			CapturedAt: capturedAt.Add(time.Duration(i) * 500 * time.Millisecond), Width: 32, Height: 64, JPEG: img})
		if err != nil {
			t.Fatal(err)
		}
		ra.send(t, transport.MessageBinary, frame)
	}

	ctx := t.Context() // waits for events, however long a busy machine takes
	sess, err := srv.WaitSession(ctx, (*host.Session).Opened)
	if err != nil {
		t.Fatalf("no open session: %v", err)
	}
	if _, err := sess.Tools().Call(ctx, wire.Call{ToolID: "notes.count"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Tools().Call(ctx, wire.Call{ToolID: "notes.purge"}); err == nil {
		t.Fatal("a critical tool ran under a read grant")
	}
	ra.send(t, transport.MessageText, done)
	<-ra.served
	if _, err := srv.WaitSession(ctx, func(s *host.Session) bool { return s == sess && s.State() == host.StateDisconnected }); err != nil {
		t.Fatalf("the session never ended: %v", err)
	}
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	id := sess.ID()
	srv.Close()
	rec.Close()

	rec = openRecorder(t, dir) // the recording outlives the host and the recorder
	sum, err := rec.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if sum.AppID != "com.example.app" || sum.DeviceName != "Pixel 8" || sum.State != "disconnected" || sum.Dropped != 0 {
		t.Errorf("summary = %+v", sum)
	}
	counts, err := rec.Counts(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	// Two profiles (device.profile, DeviceAppProfile), two app states (app.state,
	// CLIENT_APP_STATE), two logs (client.log, CLIENT_LOG), four frames (three ASJP, one
	// CLIENT_JPEG); this crash.handoff's report lacks the identity the host checks, so it is
	// refused and kept as a control record with its refusal.
	want := map[recording.Kind]int64{recording.KindChannel: 2, recording.KindMetric: 2, recording.KindEvent: 1,
		recording.KindTouch: 3, recording.KindNetwork: 1, recording.KindTree: 1, recording.KindAppState: 2,
		recording.KindProfile: 2, recording.KindProperties: 1, recording.KindLog: 2, recording.KindFrame: 4,
		recording.KindMessage: 1, recording.KindControl: 1}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("%s: %d records, want %d (all: %v)", k, counts[k], n, counts)
		}
	}
	find := func(q recording.Query) []recording.Record {
		t.Helper()
		q.Session = id
		p, err := rec.Records(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return p.Records
	}
	states := find(recording.Query{Kinds: []recording.Kind{recording.KindState}})
	var texts []string
	for _, s := range states {
		texts = append(texts, s.Text)
	}
	if got := strings.Join(texts, ","); got != "connected,opened Pixel 8,done,disconnected" {
		t.Errorf("state changes = %s", got)
	}
	traffic := find(recording.Query{Kinds: []recording.Kind{recording.KindTraffic}, Search: "notes."})
	var tr []string
	for _, r := range traffic {
		tr = append(tr, r.Text)
	}
	// The critical tool is refused before anything is sent (the app's catalog hides it
	// from a read grant, so the refusal is tool_not_found).
	if got := strings.Join(tr, " | "); !strings.HasPrefix(got, "tool.call notes.count ok | tool.result notes.count ok | denied tool.call notes.purge error ") {
		t.Errorf("traffic = %s", got)
	}
	if res := traffic[1]; !strings.Contains(string(res.Data), `"count":3`) || res.Value <= 0 {
		t.Errorf("response record = %+v", res)
	}
	if errs := find(recording.Query{Kinds: []recording.Kind{recording.KindLog}, Level: recording.LevelError}); len(errs) != 1 ||
		errs[0].Text != "[Error] payment declined" {
		t.Errorf("error logs = %+v", errs)
	}
	frames := find(recording.Query{Kinds: []recording.Kind{recording.KindFrame}, Since: capturedAt})
	if len(frames) != 3 || !frames[2].At.Equal(capturedAt.Add(time.Second)) || frames[0].BlobBytes != int64(len(img)) {
		t.Errorf("ASJP frames = %+v", frames)
	}
	net := find(recording.Query{Kinds: []recording.Kind{recording.KindNetwork}})
	if strings.Contains(string(net[0].Data), "Bearer secret") || !strings.Contains(string(net[0].Data), Redacted) {
		t.Errorf("network record not sanitised: %s", net[0].Data)
	}
	crash := find(recording.Query{Kinds: []recording.Kind{recording.KindControl}})
	if !strings.Contains(crash[0].Text, "crash.handoff refused") || !strings.Contains(string(crash[0].Data), "native_crash") {
		t.Errorf("crash.handoff = %+v", crash[0])
	}
}

const Redacted = recording.Redacted

// TestHostRecordsKeptFiles: a crash report and an annotated-feedback bundle an official
// app hands over are part of the recording — indexed with the host's description, their
// files the host's own, linked rather than stored a second time — and the bundle's ASFT
// transfer leaves no artifact record of its temporary file.
func TestHostRecordsKeptFiles(t *testing.T) {
	rec := openRecorder(t, t.TempDir())
	srv := startHost(t, rec, func(o *host.Options) { o.Tools.ArtifactDir = t.TempDir() })
	psid := pairing.NewToken(16)
	ra := serveReplay(t, enrollProcess(t, srv, "com.example.app", psid))
	ra.control(t, officialControl[0])
	resp := ra.control(t, `{"type":"CONTROL_REQ","id":"client.crash","replyTo":null,"action":"crash.handoff","payload":{"reportId":"r1",`+
		`"targetProcessSessionId":"crashed-process","targetSessionId":null,"deliveryProcessSessionId":"`+psid+`","report":{"schema":"ansight.crash.v1",`+
		`"reportId":"r1","previousProcessSessionId":"crashed-process","occurredAtUtc":"2026-09-04T02:00:00Z","platform":"android",`+
		`"kind":"native_crash","confidence":"confirmed","candidate":{"message":"SIGSEGV in libgame.so"},"traceBase64":"dHJhY2U="}},"success":true,"message":null}`)
	if !strings.Contains(resp, `"success":true`) {
		t.Fatalf("crash.handoff: %s", resp)
	}
	bundle := []byte("PK\x03\x04 an annotation bundle")
	transferID := wire.NewTransferID()
	resp = ra.control(t, `{"type":"CONTROL_REQ","id":"client.note","replyTo":null,"action":"annotation.submit","payload":{"schema":"ansight.annotation.submit.v1",`+
		`"clientAnnotationId":"1b4e28ba2fa111d2883f0016d3cca427","capturedAtUtc":"2026-09-04T02:01:00Z","transfer":{"transferId":"`+transferID+`",`+
		`"fileName":"note.ansightannotation","mimeType":"application/vnd.ansight.annotation+zip","sizeBytes":`+fmt.Sprint(len(bundle))+
		`,"chunkBytes":65536,"wireProtocol":"ansight.file-transfer.v1"}},"success":true,"message":null}`)
	if !strings.Contains(resp, `"success":true`) {
		t.Fatalf("annotation.submit: %s", resp)
	}
	for _, f := range []wire.Frame{{Type: wire.FrameChunk, TransferID: transferID, Payload: bundle},
		{Type: wire.FrameComplete, TransferID: transferID, Sequence: 1, Offset: int64(len(bundle))}} {
		frame, err := wire.AppendFrame(nil, f)
		if err != nil {
			t.Fatal(err)
		}
		ra.send(t, transport.MessageBinary, frame)
	}
	ra.control(t, `{"type":"CONTROL_REQ","id":"client.log","action":"client.log","payload":{"data":"after the frames"}}`)
	id := srv.Sessions()[0].ID()
	ctx := t.Context()
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	crashes, err := srv.Crashes(id)
	if err != nil || len(crashes) != 1 {
		t.Fatalf("host crashes %v (%v)", crashes, err)
	}
	notes, err := srv.Annotations(id)
	if err != nil || len(notes) != 1 {
		t.Fatalf("host annotations %v (%v)", notes, err)
	}
	counts, _ := rec.Counts(ctx, id)
	if counts[recording.KindCrash] != 1 || counts[recording.KindAnnotation] != 1 || counts[recording.KindArtifact] != 0 {
		t.Fatalf("recorded %v", counts)
	}
	same := func(kind recording.Kind, file, text string) recording.Record {
		t.Helper()
		p, err := rec.Records(ctx, recording.Query{Session: id, Kinds: []recording.Kind{kind}})
		if err != nil {
			t.Fatal(err)
		}
		r := p.Records[0]
		mine, err := os.Stat(filepath.Join(rec.Dir(), filepath.FromSlash(r.Blob)))
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(mine, theirs) || r.Text != text {
			t.Errorf("%s record %+v: a copy of %s, or not %q", kind, r, file, text)
		}
		return r
	}
	c := same(recording.KindCrash, filepath.Join(crashes[0].Dir, "report.json"), "native_crash: SIGSEGV in libgame.so")
	if !c.At.Equal(time.Date(2026, 9, 4, 2, 0, 0, 0, time.UTC)) || !strings.Contains(string(c.Data), `"reportId":"r1"`) {
		t.Errorf("crash record %+v", c)
	}
	same(recording.KindAnnotation, notes[0].Path, "annotation 1b4e28ba2fa111d2883f0016d3cca427")
	p, _ := rec.Records(ctx, recording.Query{Session: id, Kinds: []recording.Kind{recording.KindControl}, Search: "crash.handoff"})
	if len(p.Records) != 1 || strings.Contains(string(p.Records[0].Data), "dHJhY2U=") {
		t.Errorf("crash.handoff request %+v", p.Records)
	}
}

// TestHostRecordsGoApp runs a Go app with the SDK's telemetry — slog handler, HTTP round
// tripper, runtime metrics, screen stream of the demo's simulated screen — against our
// host, and finds each kind in the recording.
func TestHostRecordsGoApp(t *testing.T) {
	t.Parallel()
	rec := openRecorder(t, t.TempDir())
	srv := startHost(t, rec, func(o *host.Options) {
		o.JpegCapture = session.JpegCapturePolicy{Mode: session.JpegCaptureApp, IntervalMilliseconds: 100, Quality: 50, MaxWidth: 160}
	})
	model := notes.New(notes.Options{})
	a := app.New(app.Options{})
	if err := model.Register(a); err != nil {
		t.Fatal(err)
	}
	tel := telemetry.New(telemetry.Options{Frames: ui.FrameSource(model), MetricsInterval: 50 * time.Millisecond})
	log := slog.New(tel.Handler(nil, nil))
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	defer web.Close()
	client := &http.Client{Transport: tel.RoundTripper(nil)}

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- connect.Run(ctx, a, connect.Local{HostAddress: "127.0.0.1", DiscoveryPorts: []int{int(srv.DiscoveryAddr().Port())}},
			connect.Options{AppID: "com.example.notes", StateDir: t.TempDir(), Telemetry: tel})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	}()
	log.Warn("cache miss", "key", "notes", "password", "p4ss") // slog attrs travel as text
	resp, err := client.Get(web.URL + "/api/notes?access_token=abc")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	sess, err := srv.WaitSession(ctx, (*host.Session).Opened)
	if err != nil {
		t.Fatalf("no session: %v", err)
	}
	id := sess.ID()
	for range 2000 { // the records arrive after the session opened
		c, err := rec.Counts(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if c[recording.KindLog] >= 1 && c[recording.KindNetwork] >= 1 && c[recording.KindMetric] >= 6 && c[recording.KindFrame] >= 2 && c[recording.KindChannel] == 3 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	counts, _ := rec.Counts(ctx, id)
	if counts[recording.KindLog] < 1 || counts[recording.KindNetwork] < 1 || counts[recording.KindMetric] < 6 || counts[recording.KindFrame] < 2 || counts[recording.KindChannel] != 3 {
		t.Fatalf("recorded %v", counts)
	}
	p, _ := rec.Records(ctx, recording.Query{Session: id, Kinds: []recording.Kind{recording.KindLog}, Level: recording.LevelWarn})
	if len(p.Records) != 1 || !strings.Contains(p.Records[0].Text, `msg="cache miss" key=notes`) {
		t.Errorf("warn logs = %+v", p.Records)
	}
	p, _ = rec.Records(ctx, recording.Query{Session: id, Kinds: []recording.Kind{recording.KindNetwork}})
	if n := p.Records[0]; !strings.HasPrefix(n.Text, "GET "+web.URL+"/api/notes?access_token=%3Credacted%3E 418") {
		t.Errorf("network = %+v", n)
	}
	p, _ = rec.Records(ctx, recording.Query{Session: id, Kinds: []recording.Kind{recording.KindFrame}})
	if f := p.Records[0]; f.BlobBytes == 0 || !strings.Contains(string(f.Data), `"width":160`) || !strings.Contains(string(f.Data), `"quality":50`) {
		t.Errorf("frame = %+v", f)
	}
}

// TestDemoSignInSanitized is the demo fixture of the sanitize policy: the demo app, with
// the Go SDK's telemetry, signs in through its sign-in screen driven by ui.perform_action
// (a user name, then the password "hunter2" typed into the secure field), recorded by our
// host. The recording already holds neither the password nor the taps on its field
// (masked at the source); a sanitised export, in either format, holds no password
// character and no touch over the password field either, and its report counts what the
// policy did (TestDemoSignInSanitized logs the counts).
func TestDemoSignInSanitized(t *testing.T) {
	t.Parallel()
	rec := openRecorder(t, t.TempDir())
	srv := startHost(t, rec, func(o *host.Options) {
		o.JpegCapture = session.JpegCapturePolicy{Mode: session.JpegCaptureApp, IntervalMilliseconds: 100, Quality: 50, MaxWidth: 390}
	})
	model := notes.New(notes.Options{})
	tel := telemetry.New(telemetry.Options{Frames: ui.FrameSource(model), MetricsInterval: -1})
	a := app.New(app.Options{Guard: catalog.Guard{DiscoveryEnabled: true, ExecutionEnabled: true, MaxPolicy: wire.PolicyWrite}})
	if err := model.RegisterReporting(a, tel); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- connect.Run(ctx, a, connect.Local{HostAddress: "127.0.0.1", DiscoveryPorts: []int{int(srv.DiscoveryAddr().Port())}},
			connect.Options{AppID: "com.example.notes", StateDir: t.TempDir(), Telemetry: tel})
	}()
	defer func() {
		cancel()
		<-done
	}()
	sess, err := srv.WaitSession(ctx, (*host.Session).Opened)
	if err != nil {
		t.Fatalf("no session: %v", err)
	}
	act := func(node, action, value string) {
		t.Helper()
		for try := 0; ; try++ {
			q, err := sess.Tools().Call(ctx, wire.Call{ToolID: "ui.query_nodes", Arguments: jsontext.Value(fmt.Sprintf(`{"nodeId":%q}`, node))})
			if err != nil || !q.Payload.Success {
				t.Fatalf("query %s: %v %+v", node, err, q)
			}
			var found struct {
				Matches []struct {
					Reference jsontext.Value `json:"reference"`
				} `json:"matches"`
			}
			if err := wire.Unmarshal(q.Payload.Result, &found); err != nil || len(found.Matches) != 1 {
				t.Fatalf("query %s: %v %s", node, err, q.Raw)
			}
			args := fmt.Sprintf(`{"reference":%s,"action":%q`, found.Matches[0].Reference, action)
			if value != "" {
				args += fmt.Sprintf(`,"value":%q`, value)
			}
			r, err := sess.Tools().Call(ctx, wire.Call{ToolID: "ui.perform_action", Arguments: jsontext.Value(args + "}")})
			if err == nil && r.Payload.Success {
				return
			}
			if try == 3 || !strings.Contains(string(r.Raw), "stale_node_reference") {
				t.Fatalf("%s %s: %v %s", action, node, err, r.Raw)
			}
		}
	}
	act("list.account", "tap", "")
	act("signin.user", "tap", "")
	act("signin.user", "typeText", "ann")
	act("signin.password", "tap", "")
	act("signin.password", "typeText", "hunter2")
	act("signin.submit", "tap", "")
	waitFor(t, rec, sess.ID(), func(c map[recording.Kind]int64) bool {
		return c[recording.KindTouch] >= 6 && c[recording.KindTree] >= 4 && c[recording.KindFrame] >= 3
	})
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	inField := func(data []byte) bool { // the password field: x 16–374, y 215–259 points
		var d struct{ X, Y float64 }
		json.Unmarshal(data, &d)
		return d.X >= 16 && d.X <= 374 && d.Y >= 215 && d.Y <= 259
	}
	p, _ := rec.Records(ctx, recording.Query{Session: sess.ID(), Kinds: []recording.Kind{recording.KindTouch}, Limit: recording.MaxLimit})
	for _, r := range p.Records {
		if inField(r.Data) {
			t.Errorf("the recording holds a tap on the password field: %s", r.Text)
		}
	}
	for _, format := range []string{recording.FormatAnsight, recording.FormatOfficial} {
		var b bytes.Buffer
		if err := rec.Export(ctx, sess.ID(), &b, recording.ExportOptions{Format: format, Sanitize: true}); err != nil {
			t.Fatal(err)
		}
		back := openRecorder(t, t.TempDir())
		sum, err := back.Import(ctx, bytes.NewReader(b.Bytes()), int64(b.Len()), recording.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		all, _ := back.Records(ctx, recording.Query{Session: sum.ID, Limit: recording.MaxLimit})
		for _, r := range all.Records {
			if strings.Contains(string(r.Data)+r.Text, "hunter2") || (r.Kind == recording.KindTouch && inField(r.Data)) {
				t.Errorf("%s: the sanitised archive keeps %s %s", format, r.Kind, r.Text)
			}
			if r.Blob != "" {
				f, _ := back.OpenBlob(r)
				blob, _ := io.ReadAll(f)
				f.Close()
				if bytes.Contains(blob, []byte("hunter2")) {
					t.Errorf("%s: the file of %s %d holds the password", format, r.Kind, r.Seq)
				}
			}
		}
		zr, _ := zip.NewReader(bytes.NewReader(b.Bytes()), int64(b.Len()))
		rf, err := zr.Open(recording.SanitizeReportName)
		if err != nil {
			t.Fatal(err)
		}
		report, _ := io.ReadAll(rf)
		t.Logf("%s sanitize report of the demo fixture: %s", format, report)
	}
}

// waitFor waits until the session's record counts satisfy ok (each commit wakes it).
func waitFor(t *testing.T, rec *recording.Recorder, id string, ok func(map[recording.Kind]int64) bool) {
	t.Helper()
	for {
		changed := rec.Changed()
		c, err := rec.Counts(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if ok(c) {
			return
		}
		select {
		case <-changed:
		case <-t.Context().Done():
			t.Fatalf("recorded %v", c)
		}
	}
}
