package recording

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// officialTree is a compact v2 tree of a sign-in screen (108×240 points): a user name
// field, a password field (isPassword) and a button.
const officialTree = `{"format":"ansight.native.visual-tree.compact.v2","platform":"android","types":["Window","EditText","Button"],` +
	`"root":{"id":"0","typeId":0,"bounds":{"x":0,"y":0,"width":108,"height":240},"children":[` +
	`{"id":"0.0","typeId":1,"automationId":"login.user","text":"ann","bounds":{"x":10,"y":40,"width":88,"height":20}},` +
	`{"id":"0.1","typeId":1,"automationId":"login.secret","isPassword":true,"text":"hunter2","bounds":{"x":10,"y":80,"width":88,"height":20}},` +
	`{"id":"0.2","typeId":2,"text":"Sign in","bounds":{"x":10,"y":120,"width":88,"height":24}}]}}`

// officialArchive builds an official host's session archive entry by entry, in the
// layout of the reference (official-ui-tests-archives.md §5): session.json v2 with its
// bulky arrays empty, logs.json, two log streams, telemetry, packed touches, a network
// request with bodies, five visual-tree index entries of which the official import keeps
// one (a wrong schema, a mismatched snapshotId, an older duplicate and an unsafe path are
// skipped), a frame at session-images/<frameId>.jpg and an artifact.
func officialArchive(t testing.TB) []byte {
	t.Helper()
	jpg := testJPEGSize(t, 108, 240)
	tree := func(id, at, schema, snapID string) string {
		header := fmt.Sprintf(`{"snapshotId":%q,"capturedAtUtc":%q,"visualTreeKind":"native","visualTreeFormat":"ansight.native.visual-tree.compact.v2",`+
			`"runtimePlatform":"android","source":"sdk.touchCapture","rootScope":"","maxDepth":8,"includeProperties":false,"includeBindableProperties":false,`+
			`"nodeCount":4,"truncated":false,"screenshotFrameId":"f-1","screenshotCapturedAtUtc":"2026-03-20T10:00:03.0000000+00:00","actionId":null,`+
			`"actionCapability":null,"evidencePhase":null,"treeHash":"h1","screenshotHash":null}`, id, at)
		snap := strings.TrimSuffix(header, "}")
		snap = strings.Replace(snap, fmt.Sprintf(`"snapshotId":%q`, id), fmt.Sprintf(`"snapshotId":%q`, snapID), 1)
		return fmt.Sprintf(`{"schema":%q,"savedAtUtc":"2026-03-20T10:10:00+00:00","header":%s,"snapshot":%s,"payload":%s}}`, schema, header, snap, officialTree)
	}
	index := func(path, id string) string {
		return fmt.Sprintf(`{"entryPath":%q,"header":{"snapshotId":%q,"capturedAtUtc":"2026-03-20T10:00:03+00:00","source":"sdk.touchCapture","nodeCount":4}}`, path, id)
	}
	session := `{"sessionId":"com-example-shop-042","appId":"com.example.shop","clientName":"Pixel 8","remoteAddress":"192.168.1.20",` +
		`"name":null,"createdUtc":"2026-03-20T10:00:00+00:00","configId":null,"processSessionId":"proc-42","status":"Disconnected",` +
		`"lastUpdatedUtc":"2026-03-20T10:05:00+00:00","isHistorical":true,"cacheSizeBytes":40960,"isPinned":false,"author":null,"replaySource":null,` +
		`"captureSource":"sdk","sdkVersion":"1.4.0","tags":["checkout"],"notes":"card flow","customProperties":{"build":{"flavor":"debug"}},` +
		`"appState":"Foreground","appStateChangedUtc":"2026-03-20T10:00:00.5+00:00",` +
		`"deviceProfile":null,"deviceProfileJson":"{\"type\":\"DeviceAppProfile\",\"sdk\":{\"name\":\"Ansight.Core\",\"version\":\"1.4.0\"},\"device\":{\"model\":\"Pixel 8\",\"osName\":\"Android\",\"osVersion\":\"15\"}}",` +
		`"appIcon":null,"appToolCatalog":null,"analyses":[],` +
		`"annotations":[{"annotationId":"a-1","startUtc":"2026-03-20T10:00:04+00:00","endUtc":"2026-03-20T10:00:05+00:00","label":"Total is wrong","source":"ansight","notes":"should be 5","captureGroupId":null,"customData":null,"evidence":[],"hookFailures":[],"geometry":[],"target":null}],` +
		`"agentTaskLinks":[],"images":[{"frameId":"f-1","capturedAtUtc":"2026-03-20T10:00:03+00:00","format":"jpeg","width":108,"height":240,"quality":60,"byteCount":` + fmt.Sprint(len(jpg)) + `}],` +
		`"touches":[],"networkRequests":[],"visualTreeSnapshots":[],"artifactSnapshots":[],` +
		`"applicationEvents":[{"eventId":"e-1","label":"Checkout opened","eventType":"Navigation","details":"cart","capturedAtUtc":"2026-03-20T10:00:01+00:00","channelId":0}],` +
		`"logStreams":[{"streamId":"sdk","kind":"sdk","displayName":"Ansight SDK","status":"Completed","startedUtc":null,"endedUtc":null,"statusMessage":null,"metadata":{},"entries":[],"totalEntryCount":2,"retainedEntryStartIndex":2},` +
		`{"streamId":"android-logcat","kind":"native","displayName":"Android Logcat","status":"Completed","startedUtc":null,"endedUtc":null,"statusMessage":null,"metadata":{"deviceSerial":"emulator-5554"},"entries":[],"totalEntryCount":1,"retainedEntryStartIndex":1}],` +
		`"logs":[],"totalLogCount":3,"retainedLogStartIndex":3,"metricChannels":[],"metrics":[],"totalApplicationEventCount":1,"totalNetworkRequestCount":1}`
	doc := `{"schema":"ansight.session-capture.v2","savedAtUtc":"2026-03-20T10:10:00+00:00","author":null,"session":` + session + `,"visualTreeSnapshotIndex":[` +
		strings.Join([]string{
			index("visual-trees/202603201000030000000-000000-snap-1.json", "snap-1"),
			index("visual-trees/202603201000020000000-000001-snap-1.json", "snap-1"),
			index("visual-trees/202603201000030000000-000002-snap-2.json", "snap-2"),
			index("visual-trees/202603201000030000000-000003-snap-3.json", "snap-3"),
			index("../escape.json", "snap-4"),
		}, ",") + `]}`
	logEntry := func(at, msg, stream string, prio int) string {
		return fmt.Sprintf(`{"timestampUtc":%q,"message":%q,"priority":%d,"source":"Client","tag":"","eventId":null,"streamId":%q}`, at, msg, prio, stream)
	}
	files := [][2]string{
		{"session.json", doc},
		{"session-data/logs.json", `{"schema":"ansight.session-archive-logs.v1","savedAtUtc":"2026-03-20T10:10:00+00:00","logs":[` +
			logEntry("2026-03-20T10:00:01+00:00", "cart loaded", "sdk", 2) + `,` + logEntry("2026-03-20T10:00:04+00:00", "payment declined", "sdk", 4) + `]}`},
		{"session-data/log-streams/index.json", `{"schema":"ansight.session-log-stream-index.v1","savedAtUtc":"2026-03-20T10:10:00+00:00","streams":[` +
			`{"streamId":"sdk","kind":"sdk","displayName":"Ansight SDK","status":"Completed","metadata":{},"entryPath":"session-data/log-streams/000-sdk.json","entryCount":2,"totalEntryCount":2},` +
			`{"streamId":"android-logcat","kind":"native","displayName":"Android Logcat","status":"Completed","metadata":{"deviceSerial":"emulator-5554"},"entryPath":"session-data/log-streams/001-android-logcat.json","entryCount":1,"totalEntryCount":1}]}`},
		{"session-data/log-streams/000-sdk.json", `{"schema":"ansight.session-log-stream.v1","savedAtUtc":"2026-03-20T10:10:00+00:00","streamId":"sdk","entries":[` +
			logEntry("2026-03-20T10:00:01+00:00", "cart loaded", "sdk", 2) + `,` + logEntry("2026-03-20T10:00:04+00:00", "payment declined", "sdk", 4) + `]}`},
		{"session-data/log-streams/001-android-logcat.json", `{"schema":"ansight.session-log-stream.v1","savedAtUtc":"2026-03-20T10:10:00+00:00","streamId":"android-logcat","entries":[` +
			logEntry("2026-03-20T10:00:02+00:00", "W/Choreographer: Skipped 31 frames", "android-logcat", 3) + `]}`},
		{"session-data/telemetry.json", `{"schema":"ansight.session-archive-telemetry.v1","savedAtUtc":"2026-03-20T10:10:00+00:00",` +
			`"channels":[{"channelId":1,"name":"FPS","colorHex":"#00FF00","unit":"fps","type":"fps","source":null,"group":null,"kind":null}],` +
			`"metrics":[{"channelId":1,"value":60,"capturedAtUtc":"2026-03-20T10:00:01+00:00","segmentId":0},{"channelId":1,"value":57,"capturedAtUtc":"2026-03-20T10:00:02+00:00","segmentId":0}]}`},
		{"session-data/touches.json", `{"schema":"ansight.touches.v1","savedAtUtc":"2026-03-20T10:10:00+00:00","batches":[` +
			`{"t0":"2026-03-20T10:00:02.5+00:00","space":"w","unit":"px","surface":[108,240,1],"ids":["t-1","t-2","t-3"],"rows":[[0,0,0,50,130],[40,2,0,50,130],[900,0,1,30,50,1,2]]}]}`},
		{"network/requests/20260320100002000-req-1.json", `{"schema":"ansight.network-request.v1","id":"req-1","source":"HttpClient","startedAtUtc":"2026-03-20T10:00:02+00:00",` +
			`"completedAtUtc":"2026-03-20T10:00:02.25+00:00","durationMilliseconds":250,"method":"POST","url":"https://api.example.com/pay?token=abc123","redactSensitiveData":true,` +
			`"protocol":"HTTP/2","requestHeaders":[{"name":"Authorization","value":"Bearer xyz"},{"name":"Content-Type","value":"application/json"}],"requestBodySizeBytes":12,` +
			`"requestBody":{"contentType":"application/json","encoding":"utf-8","data":"{\"amount\":5}","capturedBytes":12,"totalBytes":12,"truncated":false},` +
			`"statusCode":402,"reasonPhrase":"Payment Required","responseHeaders":[],"responseBodySizeBytes":21,` +
			`"responseBody":{"contentType":"application/json","encoding":"utf-8","data":"{\"error\":\"declined\"}","capturedBytes":20,"totalBytes":20,"truncated":false},"errorType":null,"errorMessage":null}`},
		{"network/requests/20260320100009000-broken.json", `{"schema":`},
		{"visual-trees/202603201000030000000-000000-snap-1.json", tree("snap-1", "2026-03-20T10:00:03+00:00", officialTreeSchema, "snap-1")},
		{"visual-trees/202603201000020000000-000001-snap-1.json", tree("snap-1", "2026-03-20T10:00:02+00:00", officialTreeSchema, "snap-1")},
		{"visual-trees/202603201000030000000-000002-snap-2.json", tree("snap-2", "2026-03-20T10:00:03+00:00", "ansight.session-visual-tree-snapshot.v1", "snap-2")},
		{"visual-trees/202603201000030000000-000003-snap-3.json", tree("snap-3", "2026-03-20T10:00:03+00:00", officialTreeSchema, "other")},
		{"session-images/f-1.jpg", string(jpg)},
		{"artifacts/reports/summary.txt", "order 7 failed\n"},
	}
	return zipOf(t, files...)
}

// testJPEGSize is a real JPEG of w×h light pixels.
func testJPEGSize(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.RGBA{220, 230, 250, 255}), image.Point{}, draw.Src)
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func importBytes(t *testing.T, r *Recorder, b []byte, opts ImportOptions) Summary {
	t.Helper()
	sum, err := r.Import(context.Background(), bytes.NewReader(b), int64(len(b)), opts)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func exportBytes(t *testing.T, r *Recorder, id string, opts ExportOptions) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := r.Export(context.Background(), id, &b, opts); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func byKind(recs []Record) map[Kind][]Record {
	m := map[Kind][]Record{}
	for _, r := range recs {
		m[r.Kind] = append(m[r.Kind], r)
	}
	return m
}

func blobOf(t *testing.T, r *Recorder, rec Record) []byte {
	t.Helper()
	f, err := r.OpenBlob(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestImportOfficialArchive reads every section of an official archive and skips what the
// official import skips, counting it.
func TestImportOfficialArchive(t *testing.T) {
	t.Parallel()
	r := open(t, t.TempDir(), nil)
	sum := importBytes(t, r, officialArchive(t), ImportOptions{})
	if sum.ID != "com-example-shop-042" || sum.AppID != "com.example.shop" || sum.DeviceName != "Pixel 8" || sum.Origin != "import" {
		t.Errorf("summary %+v", sum)
	}
	// The description our host gives a session: the platform and app state from the
	// profile and appState, the profile itself.
	info := objectOf(sum.Info)
	if p, _ := str(info.get("platform")); p != "Android" || strOf(info.get("appState")) != "foreground" ||
		!strings.Contains(string(info.get("profile")), `"osVersion":"15"`) {
		t.Errorf("session info %s", sum.Info)
	}
	want := map[string]int{"visualTreeSchema": 1, "visualTreeSnapshotId": 1, "visualTreeDuplicate": 1, "visualTreeUnsafePath": 1, "networkRequest": 1}
	if sum.Import == nil || sum.Import.Format != FormatOfficial || sum.Import.Schema != officialCaptureV2 || fmt.Sprint(sum.Import.Skipped) != fmt.Sprint(want) {
		t.Errorf("import report %+v, want skipped %v", sum.Import, want)
	}
	k := byKind(all(t, r, Query{Session: sum.ID}))
	counts := map[Kind]int{KindLog: 3, KindChannel: 1, KindMetric: 2, KindTouch: 3, KindNetwork: 1, KindTree: 1, KindFrame: 1, KindArtifact: 1,
		KindAnnotation: 1, KindEvent: 1, KindProfile: 1, KindProperties: 1, KindAppState: 1, KindState: 1}
	for kind, n := range counts {
		if len(k[kind]) != n {
			t.Errorf("%d %s records, want %d", len(k[kind]), kind, n)
		}
	}
	if l := k[KindLog]; len(l) == 3 && (l[1].Text != "W/Choreographer: Skipped 31 frames" || l[1].Level != LevelWarn || l[2].Level != LevelError ||
		!strings.Contains(string(l[1].Data), `"streamId":"android-logcat"`)) {
		t.Errorf("logs %+v", l)
	}
	if tr := k[KindTree]; len(tr) == 1 {
		if !tr[0].At.Equal(time.Date(2026, 3, 20, 10, 0, 3, 0, time.UTC)) || !strings.Contains(string(blobOf(t, r, tr[0])), `"login.secret"`) {
			t.Errorf("kept tree %+v (the newest of snap-1 is kept)", tr[0])
		}
	}
	if n := k[KindNetwork]; len(n) == 1 {
		d := string(n[0].Data)
		if strings.Contains(d, "Bearer xyz") || strings.Contains(d, "abc123") || !strings.Contains(d, `declined`) {
			t.Errorf("network record not sanitised on import, or its body lost: %s", d)
		}
	}
	if tc := k[KindTouch]; len(tc) == 3 && (!strings.Contains(string(tc[2].Data), `"id":"t-3"`) || !strings.Contains(string(tc[2].Data), `"pointerCount":2`) ||
		!tc[2].At.Equal(time.Date(2026, 3, 20, 10, 0, 3, 400e6, time.UTC))) {
		t.Errorf("touch %+v", tc[2])
	}
	if f := k[KindFrame]; len(f) == 1 && !bytes.Equal(blobOf(t, r, f[0]), testJPEGSize(t, 108, 240)) {
		t.Error("frame bytes differ")
	}
	if a := k[KindArtifact]; len(a) == 1 && string(blobOf(t, r, a[0])) != "order 7 failed\n" {
		t.Error("artifact bytes differ")
	}
}

// TestImportOfficialV1 reads a session.json of schema v1 as the official SDK's older
// archive writer made it (its arrays inline and empty, the frames listed).
func TestImportOfficialV1(t *testing.T) {
	t.Parallel()
	jpg := testJPEGSize(t, 8, 8)
	doc := `{"schema":"ansight.session-capture.v1","savedAtUtc":"2026-03-20T10:10:00+00:00","author":null,"session":{"sessionId":"0198c1d2",` +
		`"appId":"offline-capture","clientName":"Offline Capture","remoteAddress":"offline","createdUtc":"2026-03-20T10:00:00+00:00","configId":null,` +
		`"status":"Imported","lastUpdatedUtc":"2026-03-20T10:01:00+00:00","isHistorical":true,"cacheSizeBytes":1,"isPinned":false,"tags":["offline-capture"],` +
		`"appState":0,"images":[{"frameId":"shot","capturedAtUtc":"2026-03-20T10:00:30+00:00","format":"jpeg","width":8,"height":8,"quality":0,"byteCount":1}],` +
		`"touches":[],"visualTreeSnapshots":[],"artifactSnapshots":[],"logs":[],"metricChannels":[],"metrics":[]}}`
	b := zipOf(t, [2]string{"session.json", doc}, [2]string{"session-images/shot.jpg", string(jpg)},
		[2]string{"session-data/logs.json", `{"schema":"ansight.session-archive-logs.v1","savedAtUtc":"2026-03-20T10:10:00+00:00","logs":[{"timestampUtc":"2026-03-20T10:00:10+00:00","message":"Checkout opened:cart","priority":2,"source":"offline-capture","tag":"Navigation","eventId":"x"}]}`},
		[2]string{"session-data/telemetry.json", `{"schema":"ansight.session-archive-telemetry.v1","savedAtUtc":"2026-03-20T10:10:00+00:00","channels":[],"metrics":[]}`},
		[2]string{"session-data/touches.json", `{"schema":"ansight.touches.v1","savedAtUtc":"2026-03-20T10:10:00+00:00","batches":[]}`})
	r := open(t, t.TempDir(), nil)
	sum := importBytes(t, r, b, ImportOptions{})
	if sum.Import.Schema != officialCaptureV1 {
		t.Errorf("schema %q", sum.Import.Schema)
	}
	k := byKind(all(t, r, Query{Session: sum.ID}))
	if len(k[KindFrame]) != 1 || len(k[KindLog]) != 1 || k[KindLog][0].Text != "Checkout opened:cart" {
		t.Errorf("records %v", k)
	}
	// A frame session.json lists without its image fails the import, as it does the official one.
	missing := zipOf(t, [2]string{"session.json", doc})
	if _, err := r.Import(context.Background(), bytes.NewReader(missing), int64(len(missing)), ImportOptions{}); err == nil ||
		!strings.Contains(err.Error(), `missing image data for frame "shot"`) {
		t.Errorf("Import without the image = %v", err)
	}
}

// liveRecording records a session of every kind through the intake, as a host does.
func liveRecording(t *testing.T, r *Recorder) string {
	t.Helper()
	const sess = "com-example-notes-001"
	now := time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)
	r.RecordSession(sess, "connected", now, []byte(`{"id":"com-example-notes-001","appId":"com.example.notes","deviceId":"dev-1","deviceName":"Gopher's laptop","clientName":"notes","state":"connected"}`))
	r.RecordControl(sess, "session.open", []byte(`{"clientName":"notes","configId":"local:com.example.notes","appId":"com.example.notes"}`), true, "", now)
	for i, line := range officialLines(t) {
		if !bytes.Contains(line, []byte(`"CLIENT_METRICS"`)) { // its 59.5 the official format cannot hold
			r.RecordMessage(sess, transport.MessageText, line, now.Add(time.Duration(i)*time.Millisecond))
		}
	}
	r.RecordMessage(sess, transport.MessageText, []byte(`{"type":"CLIENT_METRICS","metrics":[{"channel":3,"value":60,"capturedAtUtc":"2026-03-20T10:00:01Z"}]}`), now)
	r.RecordControl(sess, "client.log", []byte(`{"data":"time=2026-03-20T10:00:01Z level=WARN msg=\"sync slow\""}`), true, "", now.Add(time.Second))
	frame, _ := wire.AppendASJP(nil, wire.ASJPFrame{Format: 1, Quality: 60, CapturedAt: now.Add(2 * time.Second), Width: 108, Height: 240, JPEG: testJPEGSize(t, 108, 240)})
	r.RecordMessage(sess, transport.MessageBinary, frame, now.Add(2*time.Second))
	r.RecordTraffic(wire.TrafficEvent{SessionID: sess, At: now.Add(3 * time.Second), Kind: wire.TrafficRequest, Type: wire.TypeCall, RequestID: "r1",
		ToolIDs: []string{"notes.get"}, Bytes: 100, Outcome: wire.TrafficOK, Payload: []byte(`{"toolId":"notes.get"}`)})
	big := `{"success":true,"data":{"text":"` + strings.Repeat("n", 70<<10) + `"}}`
	r.RecordTraffic(wire.TrafficEvent{SessionID: sess, At: now.Add(3 * time.Second), Kind: wire.TrafficResponse, Type: wire.TypeResult, RequestID: "r1",
		ToolIDs: []string{"notes.get"}, Bytes: len(big), Outcome: wire.TrafficOK, Payload: []byte(big)})
	art := filepath.Join(t.TempDir(), "export.csv")
	os.WriteFile(art, []byte("id,title\n1,groceries\n"), 0o600)
	r.RecordTraffic(wire.TrafficEvent{SessionID: sess, At: now.Add(4*time.Second + 250*time.Millisecond), Kind: wire.TrafficTransfer, Type: "ASFT", RequestID: "r2",
		TransferID: "x1", FileName: "export.csv", MimeType: "text/csv", ReceivedBytes: 21, SizeBytes: 21, Outcome: wire.TrafficOK, Path: art})
	crash := filepath.Join(t.TempDir(), "report.json")
	os.WriteFile(crash, []byte(`{"reportId":"c1","kind":"panic"}`), 0o600)
	r.RecordKept(sess, string(KindCrash), "panic c1", now.Add(5*time.Second), []byte(`{"reportId":"c1","kind":"panic"}`), crash)
	r.RecordSession(sess, "disconnected", now.Add(6*time.Second), nil)
	waitIdle(t, r)
	return sess
}

// comparable is what both formats carry of a record: its kind, time, level, summary,
// channel, value and file.
func comparable(t *testing.T, r *Recorder, rec Record) string {
	ch := ""
	if rec.Channel != nil {
		ch = fmt.Sprint(*rec.Channel)
	}
	file := ""
	if rec.Blob != "" {
		file = fmt.Sprintf("%x", blobOf(t, r, rec))
	}
	return fmt.Sprintf("%s %s %s %q %s %g %s", rec.Kind, rec.At.Format(time.RFC3339Nano), rec.Level, rec.Text, ch, rec.Value, file)
}

// TestRoundTripOursOfficialOurs: a live recording exported to the official format and
// imported back has every record it had — the official sections for what they hold, the
// rest from the archive's ansight-go extension — with its times, levels, texts, values
// and files; only the import's own state record is new.
func TestRoundTripOursOfficialOurs(t *testing.T) {
	t.Parallel()
	r := open(t, t.TempDir(), func(o *Options) { o.MinFrameInterval = -1 })
	sess := liveRecording(t, r)
	before := all(t, r, Query{Session: sess})
	archive := exportBytes(t, r, sess, ExportOptions{Format: FormatOfficial})
	checkOfficialLayout(t, archive)
	sum := importBytes(t, r, archive, ImportOptions{})
	after := all(t, r, Query{Session: sum.ID})
	// The session's description comes back too (the extension's info.json): all but its id
	// and its state (an imported recording is disconnected).
	orig, err := r.Session(context.Background(), sess)
	if err != nil {
		t.Fatal(err)
	}
	if sum.AppID != orig.AppID || sum.DeviceID != orig.DeviceID || sum.DeviceName != orig.DeviceName ||
		string(objectOf(sum.Info).without("id").without("state").encode()) != string(objectOf(orig.Info).without("id").without("state").encode()) {
		t.Errorf("ours → official → ours changed the session's description:\n%+v %s\nwas\n%+v %s", sum, sum.Info, orig, orig.Info)
	}
	var was, is []string
	for _, rec := range before {
		was = append(was, comparable(t, r, rec))
	}
	for _, rec := range after {
		if rec.Kind == KindState && strings.HasPrefix(rec.Text, "imported") {
			continue
		}
		is = append(is, comparable(t, r, rec))
	}
	slices.Sort(was)
	slices.Sort(is)
	if d := diffLines(was, is); d != "" {
		t.Errorf("ours → official → ours changed records:\n%s", d)
	}
	// The kinds the official format has no section for keep their data too.
	bk, ak := byKind(before), byKind(after)
	for _, kind := range []Kind{KindTraffic, KindControl, KindCrash, KindProfile, KindAppState, KindArtifact} {
		if len(bk[kind]) != len(ak[kind]) {
			t.Errorf("%s: %d records, were %d", kind, len(ak[kind]), len(bk[kind]))
			continue
		}
		for i := range bk[kind] {
			if !bytes.Equal(bk[kind][i].Data, ak[kind][i].Data) {
				t.Errorf("%s data %s, was %s", kind, ak[kind][i].Data, bk[kind][i].Data)
			}
		}
	}
}

// diffLines lists the lines only one side has.
func diffLines(a, b []string) string {
	var out []string
	for _, l := range a {
		if !slices.Contains(b, l) {
			out = append(out, "- "+clip(l, 300))
		}
	}
	for _, l := range b {
		if !slices.Contains(a, l) {
			out = append(out, "+ "+clip(l, 300))
		}
	}
	return strings.Join(out, "\n")
}

// checkOfficialLayout holds an exported archive to the official import's rules, entry by
// entry: the documents and their schemas, each listed frame's image at
// session-images/<frameId>.jpg, each indexed tree at its path with its snapshotId, the
// network requests readable.
func checkOfficialLayout(t *testing.T, archive []byte) {
	t.Helper()
	z, err := openZip(bytes.NewReader(archive), int64(len(archive)), 1<<30, "")
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) object {
		b, err := z.readAll(name, 64<<20)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		o, err := parseObject(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return o
	}
	doc := read(officialSessionName)
	if s, _ := str(doc.get("schema")); s != officialCaptureV2 {
		t.Errorf("session.json schema %q", s)
	}
	sess, _ := members(doc.get("session"))
	for _, req := range []string{"sessionId", "appId", "clientName", "remoteAddress", "createdUtc", "configId", "status", "lastUpdatedUtc",
		"isHistorical", "metricChannels", "metrics"} {
		if sess.get(req) == nil {
			t.Errorf("session.json lacks the required %s", req)
		}
	}
	for _, empty := range []string{"touches", "networkRequests", "visualTreeSnapshots", "logs", "metricChannels", "metrics"} {
		if string(sess.get(empty)) != "[]" {
			t.Errorf("session.%s is %s, not emptied", empty, sess.get(empty))
		}
	}
	for _, it := range arrayItems(sess.get("images")) {
		f, _ := members(it)
		id, _ := str(f.get("frameId"))
		if !z.has(officialImageEntry(id)) {
			t.Errorf("frame %s has no %s", id, officialImageEntry(id))
		}
	}
	for _, it := range arrayItems(doc.get("visualTreeSnapshotIndex")) {
		d, _ := members(it)
		p, _ := str(d.get("entryPath"))
		h, _ := members(d.get("header"))
		td := read(p)
		snap, _ := members(td.get("snapshot"))
		if s, _ := str(td.get("schema")); s != officialTreeSchema || string(snap.get("snapshotId")) != string(h.get("snapshotId")) {
			t.Errorf("tree %s: schema %q, snapshotId %s for %s", p, s, snap.get("snapshotId"), h.get("snapshotId"))
		}
		// The official SessionVisualTreeSnapshotHeader's required members (C# required: a
		// header without one fails System.Text.Json, in the index and in the entry alike),
		// and the snapshot's.
		th, _ := members(td.get("header"))
		for where, hdr := range map[string]object{"index": h, "entry": th} {
			for _, req := range []string{"snapshotId", "capturedAtUtc", "visualTreeKind", "visualTreeFormat", "runtimePlatform", "source"} {
				if hdr.get(req).Kind() != '"' {
					t.Errorf("tree %s: the %s header lacks the required string %s: %s", p, where, req, hdr.encode())
				}
			}
		}
		if _, ok := integer(snap.get("nodeCount"), 0, 1<<31); !ok || snap.get("payload").Kind() != '{' {
			t.Errorf("tree %s: nodeCount %s, payload of kind %v", p, snap.get("nodeCount"), snap.get("payload").Kind())
		}
	}
	for name, schema := range map[string]string{officialLogsName: officialLogsSchema, officialTelemetryName: officialTelemetry, officialTouchesName: TouchSchema} {
		if s, _ := str(read(name).get("schema")); s != schema {
			t.Errorf("%s schema %q", name, s)
		}
	}
	for _, name := range z.under(officialRequestsDir) {
		req := read(name)
		for _, m := range []string{"id", "source", "startedAtUtc", "completedAtUtc", "durationMilliseconds", "method", "url"} {
			if req.get(m) == nil {
				t.Errorf("%s lacks the required %s", name, m)
			}
		}
	}
}

// TestRoundTripOfficialOursOfficial: an official archive imported and exported again
// holds what it held, section by section.
func TestRoundTripOfficialOursOfficial(t *testing.T) {
	t.Parallel()
	r := open(t, t.TempDir(), nil)
	sum := importBytes(t, r, officialArchive(t), ImportOptions{})
	archive := exportBytes(t, r, sum.ID, ExportOptions{Format: FormatOfficial})
	checkOfficialLayout(t, archive)
	z, _ := openZip(bytes.NewReader(archive), int64(len(archive)), 1<<30, "")
	read := func(name string) object {
		b, err := z.readAll(name, 64<<20)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		o, _ := parseObject(b)
		return o
	}
	sess, _ := members(read(officialSessionName).get("session"))
	for name, want := range map[string]string{"sessionId": `"com-example-shop-042"`, "clientName": `"Pixel 8"`, "remoteAddress": `"192.168.1.20"`,
		"notes": `"card flow"`, "tags": `["checkout"]`, "processSessionId": `"proc-42"`, "customProperties": `{"build":{"flavor":"debug"}}`,
		"appState": `"Foreground"`} {
		if got := string(sess.get(name)); got != want {
			t.Errorf("session.%s = %s, want %s", name, got, want)
		}
	}
	if a := arrayItems(sess.get("annotations")); len(a) != 1 || !strings.Contains(string(a[0]), `"label":"Total is wrong"`) {
		t.Errorf("annotations %s", sess.get("annotations"))
	}
	if e := arrayItems(sess.get("applicationEvents")); len(e) != 1 || !strings.Contains(string(e[0]), `"eventId":"e-1"`) || !strings.Contains(string(e[0]), `"eventType":"Navigation"`) {
		t.Errorf("applicationEvents %s", sess.get("applicationEvents"))
	}
	if im := arrayItems(sess.get("images")); len(im) != 1 || !strings.Contains(string(im[0]), `"frameId":"f-1"`) {
		t.Errorf("images %s", sess.get("images"))
	}
	if b, _ := z.readAll("session-images/f-1.jpg", 1<<20); !bytes.Equal(b, testJPEGSize(t, 108, 240)) {
		t.Error("frame bytes differ")
	}
	if b, _ := z.readAll("artifacts/reports/summary.txt", 1<<20); string(b) != "order 7 failed\n" {
		t.Errorf("artifact %q", b)
	}
	idx := arrayItems(read(officialStreamIndex).get("streams"))
	if len(idx) != 2 || !strings.Contains(string(idx[1]), `"streamId":"android-logcat"`) || !strings.Contains(string(idx[1]), `"deviceSerial":"emulator-5554"`) {
		t.Errorf("log streams %s", idx)
	}
	if e := arrayItems(read("session-data/log-streams/001-android-logcat.json").get("entries")); len(e) != 1 || !strings.Contains(string(e[0]), "Skipped 31 frames") {
		t.Errorf("logcat entries %s", e)
	}
	tele := read(officialTelemetryName)
	if c, m := arrayItems(tele.get("channels")), arrayItems(tele.get("metrics")); len(c) != 1 || len(m) != 2 || !strings.Contains(string(m[1]), `"value":57`) {
		t.Errorf("telemetry %s", tele.encode())
	}
	batches := arrayItems(read(officialTouchesName).get("batches"))
	if len(batches) != 1 || !strings.Contains(string(batches[0]), `"rows":[[0,0,0,50,130],[40,2,0,50,130],[900,0,1,30,50,1,2]]`) ||
		!strings.Contains(string(batches[0]), `"ids":["t-1","t-2","t-3"]`) || !strings.Contains(string(batches[0]), `"surface":[108,240,1]`) {
		t.Errorf("touches %s", batches)
	}
	reqs := z.under(officialRequestsDir)
	if len(reqs) != 1 {
		t.Fatalf("requests %v", reqs)
	}
	if req := string(read(reqs[0]).encode()); !strings.Contains(req, `"id":"req-1"`) || !strings.Contains(req, `"statusCode":402`) ||
		!strings.Contains(req, `declined`) {
		t.Errorf("request %s", req)
	}
	idxTrees := arrayItems(read(officialSessionName).get("visualTreeSnapshotIndex"))
	if len(idxTrees) != 1 || !strings.Contains(string(idxTrees[0]), `"snapshotId":"snap-1"`) || !strings.Contains(string(idxTrees[0]), `"screenshotFrameId":"f-1"`) {
		t.Errorf("tree index %s", idxTrees)
	}
	// And imported again, the same records.
	again := importBytes(t, r, archive, ImportOptions{})
	a, b := all(t, r, Query{Session: sum.ID}), all(t, r, Query{Session: again.ID})
	var x, y []string
	for _, rec := range a {
		if rec.Kind != KindState {
			x = append(x, comparable(t, r, rec))
		}
	}
	for _, rec := range b {
		if rec.Kind != KindState {
			y = append(y, comparable(t, r, rec))
		}
	}
	slices.Sort(x)
	slices.Sort(y)
	if d := diffLines(x, y); d != "" {
		t.Errorf("official → ours → official → ours changed records:\n%s", d)
	}
}

// TestImportOfflineCapture reads an official SDK's offline capture (testdata/offline-capture,
// the SDK's own layout and line shapes), plain and AES-encrypted (made by 7-Zip, an
// independent WinZip AES writer, with the password "correct horse battery").
func TestImportOfflineCapture(t *testing.T) {
	t.Parallel()
	plain := zipDir(t, "testdata/offline-capture")
	enc, err := os.ReadFile("testdata/offline-capture-aes.zip")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		archive  []byte
		password string
	}{{"plain", plain, ""}, {"aes", enc, "correct horse battery"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := open(t, t.TempDir(), nil)
			sum := importBytes(t, r, tc.archive, ImportOptions{Password: tc.password})
			if sum.ID != "0198c1d2e3f4a5b6c7d8e9f0a1b2c3d4" || sum.AppID != "com.example.offline" || sum.Import.Format != FormatOfflineCapture {
				t.Errorf("summary %+v %+v", sum, sum.Import)
			}
			k := byKind(all(t, r, Query{Session: sum.ID}))
			for kind, n := range map[Kind]int{KindChannel: 2, KindMetric: 3, KindEvent: 2, KindTouch: 2, KindNetwork: 1, KindFrame: 1, KindAnnotation: 1,
				KindCrash: 1, KindArtifact: 1, KindProfile: 1, KindProperties: 1} {
				if len(k[kind]) != n {
					t.Errorf("%d %s records, want %d", len(k[kind]), kind, n)
				}
			}
			if m := k[KindMetric]; len(m) == 3 && (m[1].Value != 123456789 || *m[1].Channel != 2) {
				t.Errorf("metric %+v", m[1])
			}
			if n := k[KindNetwork]; len(n) == 1 && strings.Contains(string(n[0].Data), "Bearer xyz") {
				t.Errorf("network record not sanitised: %s", n[0].Data)
			}
			if tc := k[KindTouch]; len(tc) == 2 && (!strings.Contains(string(tc[0].Data), `"surface":[1080,2400,2.625]`) || tc[1].Text != "up #0 (121, 301.5)") {
				t.Errorf("touches %s / %s", tc[0].Data, tc[1].Text)
			}
		})
	}
}

// zipDir zips a directory tree as the SDK's exporter does (entries with / separators).
func zipDir(t *testing.T, dir string) []byte {
	t.Helper()
	var files [][2]string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files = append(files, [2]string{filepath.ToSlash(rel), string(b)})
		return nil
	})
	return zipOf(t, files...)
}

// TestImportPassword: the official words and reasons for a missing and a wrong password.
func TestImportPassword(t *testing.T) {
	t.Parallel()
	enc, err := os.ReadFile("testdata/offline-capture-aes.zip")
	if err != nil {
		t.Fatal(err)
	}
	r := open(t, t.TempDir(), nil)
	for _, tc := range []struct{ password, reason, message string }{
		{"", ReasonPasswordRequired, "This recording is password protected."},
		{"wrong", ReasonInvalidPassword, "The recording password is incorrect, or the encrypted archive is damaged."},
	} {
		_, err := r.Import(context.Background(), bytes.NewReader(enc), int64(len(enc)), ImportOptions{Password: tc.password})
		var pe *PasswordError
		if !errors.As(err, &pe) || pe.Reason != tc.reason || pe.Error() != tc.message {
			t.Errorf("password %q: %v", tc.password, err)
		}
	}
	if list, _ := r.Sessions(context.Background()); len(list) != 0 {
		t.Errorf("a refused import left %v", list)
	}
}
