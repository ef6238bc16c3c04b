package recording

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"go.uber.org/goleak"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func open(t *testing.T, dir string, mutate func(*Options)) *Recorder {
	t.Helper()
	opts := Options{Dir: dir}
	if mutate != nil {
		mutate(&opts)
	}
	r, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// officialLines are the telemetry messages of testdata/official-telemetry.jsonl, in the
// shapes the official SDKs send.
func officialLines(t testing.TB) [][]byte {
	t.Helper()
	f, err := os.Open("testdata/official-telemetry.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			out = append(out, bytes.Clone(line))
		}
	}
	return out
}

// testJPEG encodes a small real JPEG.
func testJPEG(t testing.TB) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 8, 16))
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 60}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// waitIdle waits until everything queued is written. Flush's barrier also covers a batch
// the writer has taken from the queue but not yet stored, which polling the queue misses.
func waitIdle(t *testing.T, r *Recorder) {
	t.Helper()
	if err := r.Flush(t.Context()); err != nil { // however long a busy disk takes
		t.Fatalf("the writer did not drain the queue: %v", err)
	}
}

func all(t *testing.T, r *Recorder, q Query) []Record {
	t.Helper()
	var out []Record
	for {
		p, err := r.Records(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Records...)
		if p.Next == 0 {
			return out
		}
		q.After = p.Next
	}
}

// TestRecordOfficialTelemetry records every message shape of the official SDKs, control
// actions, a live frame and tool traffic; reopens the recordings; and reads each kind back.
func TestRecordOfficialTelemetry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := open(t, dir, nil)
	const sess = "com-example-app-001"
	now := time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)
	r.RecordSession(sess, "connected", now, []byte(`{"id":"com-example-app-001","appId":"com.example.app","deviceId":"dev-1","deviceName":"Pixel","state":"connected"}`))
	for _, line := range officialLines(t) {
		r.RecordMessage(sess, transport.MessageText, line, now)
	}
	img := testJPEG(t)
	frame, err := wire.AppendASJP(nil, wire.ASJPFrame{Format: wire.ASJPFormatJPEG, Quality: 60, Flags: 3,
		CapturedAt: now.Add(time.Second), Width: 8, Height: 16, JPEG: img})
	if err != nil {
		t.Fatal(err)
	}
	r.RecordMessage(sess, transport.MessageBinary, frame, now)
	r.RecordControl(sess, "client.log", []byte(`{"data":"time=2026-03-20T10:00:01Z level=ERROR msg=\"boom\" code=7"}`), true, "Client log received.", now)
	r.RecordControl(sess, "client.log", nil, true, "Client log received.", now)
	r.RecordControl(sess, "app.state", []byte(`{"state":"foreground","changedAtUtc":"2026-03-20T10:00:00+00:00"}`), true, "App state received.", now)
	r.RecordControl(sess, "session.properties", []byte(`{"customProperties":{"user":{"tier":"gold"}},"updatedAtUtc":"2026-03-20T10:02:00+00:00"}`), true, "Session properties received.", now)
	r.RecordControl(sess, "crash.handoff", []byte(`{"reportId":"6f91","targetProcessSessionId":"p1","report":{"schema":"ansight.crash.v1","platform":"android","kind":"native_crash","occurredAtUtc":"2026-08-13T00:00:00.000Z","traceBase64":"dHJhY2U="}}`), true, "Crash report stored.", now)
	r.RecordControl(sess, "annotation.submit", []byte(`{"schema":"ansight.annotation.submit.v1"}`), false, "Unsupported control action 'annotation.submit'.", now)
	r.RecordTraffic(wire.TrafficEvent{SessionID: sess, At: now, Kind: wire.TrafficRequest, Type: wire.TypeCall, RequestID: "r1", Origin: "mcp:claude-code",
		ToolIDs: []string{"notes.count"}, Bytes: 90, PayloadBytes: 40, EncodedBytes: 40, Outcome: wire.TrafficOK,
		Payload: []byte(`{"toolId":"notes.count","arguments":{}}`)})
	r.RecordTraffic(wire.TrafficEvent{SessionID: sess, At: now.Add(3 * time.Millisecond), Kind: wire.TrafficResponse, Type: wire.TypeResult,
		RequestID: "r1", ToolIDs: []string{"notes.count"}, Bytes: 120, Duration: 3 * time.Millisecond, Outcome: wire.TrafficOK,
		Payload: []byte(`{"toolId":"notes.count","success":true,"data":{"count":3}}`)})
	r.RecordTraffic(wire.TrafficEvent{SessionID: sess, At: now, Kind: wire.TrafficDenied, Type: wire.TypeCall,
		ToolIDs: []string{"files.delete"}, Outcome: wire.TrafficError, ErrorCode: string(wire.CodePolicyNotGranted)})
	// What the host keeps on its side: a crash report, an annotation bundle, and an
	// artifact that the command which asked for it moves away at once.
	kept := t.TempDir()
	report := filepath.Join(kept, "report.json")
	bundle := filepath.Join(kept, "n.ansightannotation")
	artifact := filepath.Join(kept, "shot.png")
	for _, f := range []string{report, bundle, artifact} {
		if err := os.WriteFile(f, []byte(`{"file":"`+filepath.Base(f)+`"}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r.RecordKept(sess, "crash", "native_crash: SIGSEGV", now.Add(-time.Hour), []byte(`{"id":"c1","kind":"native_crash"}`), report)
	r.RecordKept(sess, "annotation", "annotation 1b4e", now, []byte(`{"id":"1b4e"}`), bundle)
	r.RecordTraffic(wire.TrafficEvent{SessionID: sess, At: now, Kind: wire.TrafficTransfer, Type: "asft", TransferID: "t1",
		FileName: "shot.png", MimeType: "image/png", Path: artifact, ReceivedBytes: 17, SizeBytes: 17, Outcome: wire.TrafficOK})
	if err := os.Rename(artifact, artifact+".moved"); err != nil { // app screenshot -o
		t.Fatal(err)
	}
	r.RecordSession(sess, "disconnected", now.Add(time.Minute), nil)
	waitIdle(t, r)
	if entries, _ := os.ReadDir(filepath.Join(dir, BlobDir, stagingDir)); len(entries) != 0 {
		t.Errorf("staged links left behind: %d", len(entries))
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}

	r = open(t, dir, nil) // recordings outlive the process
	ctx := context.Background()
	sum, err := r.Session(ctx, sess)
	if err != nil {
		t.Fatal(err)
	}
	if sum.AppID != "com.example.app" || sum.State != "disconnected" || sum.Records == 0 {
		t.Errorf("summary = %+v", sum)
	}
	counts, err := r.Counts(ctx, sess)
	if err != nil {
		t.Fatal(err)
	}
	want := map[Kind]int64{KindChannel: 2, KindMetric: 2, KindEvent: 1, KindTouch: 3, KindNetwork: 1, KindTree: 1,
		KindAppState: 2, KindLog: 3, KindProfile: 1, KindFrame: 2, KindMessage: 1, KindProperties: 1, KindCrash: 1,
		KindAnnotation: 1, KindArtifact: 1, KindControl: 2, KindTraffic: 4, KindState: 3}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("%s records = %d, want %d (all: %v)", k, counts[k], n, counts)
		}
	}

	t.Run("logs", func(t *testing.T) {
		logs := all(t, r, Query{Session: sess, Kinds: []Kind{KindLog}})
		levels := []string{}
		for _, l := range logs {
			levels = append(levels, l.Level.String()+":"+l.Text)
		}
		got := strings.Join(levels, "|")
		if want := `warn:[Warning] legacy log line|error:time=2026-03-20T10:00:01Z level=ERROR msg="boom" code=7|info:<empty>`; got != want {
			t.Errorf("logs = %s\nwant   %s", got, want)
		}
		errs := all(t, r, Query{Session: sess, Kinds: []Kind{KindLog}, Level: LevelWarn, Search: "BOOM"})
		if len(errs) != 1 || errs[0].Level != LevelError {
			t.Errorf("level+search = %+v", errs)
		}
	})
	t.Run("metrics", func(t *testing.T) {
		ch := 3
		m := all(t, r, Query{Session: sess, Kinds: []Kind{KindMetric}, Channel: &ch})
		if len(m) != 1 || m[0].Value != 59.5 || !m[0].At.Equal(time.Date(2026, 3, 20, 9, 59, 58, 5e8, time.UTC)) {
			t.Errorf("fps samples = %+v", m)
		}
		chans := all(t, r, Query{Session: sess, Kinds: []Kind{KindChannel}})
		if len(chans) != 2 || chans[1].Text != "FPS" || !strings.Contains(string(chans[1].Data), `"group":"rendering"`) {
			t.Errorf("channels = %+v", chans)
		}
	})
	t.Run("touches", func(t *testing.T) {
		tt := all(t, r, Query{Session: sess, Kinds: []Kind{KindTouch}})
		if len(tt) != 3 || tt[2].Text != "up #7 (130, 250)" || !tt[1].At.Equal(time.Date(2026, 3, 20, 9, 59, 59, 16e6, time.UTC)) ||
			!strings.Contains(string(tt[2].Data), `"pointerCount":1`) || !strings.Contains(string(tt[2].Data), `"surface":[480,800,2]`) {
			t.Errorf("touches = %+v", tt)
		}
	})
	t.Run("network sanitised", func(t *testing.T) {
		n := all(t, r, Query{Session: sess, Kinds: []Kind{KindNetwork}})
		if len(n) != 1 {
			t.Fatalf("network = %+v", n)
		}
		data := string(n[0].Data)
		for _, secret := range []string{"azure-secret", "tomorrow", "raw-token", "Bearer secret", "body-secret", "error-secret", "sid=abc", "sid=def"} {
			if strings.Contains(data, secret) || strings.Contains(n[0].Text, secret) {
				t.Errorf("stored %q: %s", secret, data)
			}
		}
		for _, kept := range []string{"view=full", `"traceParent":"00-abc-def-01"`, `"method":"GET"`, `"value":"application/json"`, `visible`} {
			if !strings.Contains(data, kept) {
				t.Errorf("lost %q: %s", kept, data)
			}
		}
		if n[0].Value != 125 || !strings.HasPrefix(n[0].Text, "GET https://blob.test/orders?") || !strings.HasSuffix(n[0].Text, " 200") {
			t.Errorf("network record = %+v", n[0])
		}
	})
	t.Run("frames", func(t *testing.T) {
		f := all(t, r, Query{Session: sess, Kinds: []Kind{KindFrame}})
		if len(f) != 2 {
			t.Fatalf("frames = %+v", f)
		}
		blob, err := r.OpenBlob(f[1])
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(blob)
		blob.Close()
		if !bytes.Equal(b, img) || !strings.Contains(string(f[1].Data), `"keyboardVisible":true`) {
			t.Errorf("ASJP frame = %+v, %d bytes", f[1], len(b))
		}
	})
	t.Run("tree", func(t *testing.T) {
		tr := all(t, r, Query{Session: sess, Kinds: []Kind{KindTree}})
		blob, err := r.OpenBlob(tr[0])
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(blob)
		blob.Close()
		if !strings.Contains(string(b), `"text":"Save"`) || !strings.Contains(string(tr[0].Data), `"gesturePhase":"ended"`) {
			t.Errorf("tree = %+v %s", tr[0], b)
		}
	})
	t.Run("traffic", func(t *testing.T) {
		tr := all(t, r, Query{Session: sess, Kinds: []Kind{KindTraffic}, Search: "notes.count"})
		if len(tr) != 2 || !strings.Contains(string(tr[1].Data), `"data":{"count":3}`) || tr[1].Value != 3 {
			t.Errorf("traffic = %+v", tr)
		}
		// Who asked for the call is kept with it (an event without an origin has none).
		if len(tr) == 2 && (!strings.Contains(string(tr[0].Data), `"origin":"mcp:claude-code"`) || strings.Contains(string(tr[1].Data), `"origin"`)) {
			t.Errorf("origins: %s / %s", tr[0].Data, tr[1].Data)
		}
		denied := all(t, r, Query{Session: sess, Kinds: []Kind{KindTraffic}, Search: "denied"})
		if len(denied) != 1 || !strings.Contains(string(denied[0].Data), string(wire.CodePolicyNotGranted)) {
			t.Errorf("denied = %+v", denied)
		}
	})
	t.Run("kept files linked, not copied", func(t *testing.T) {
		for _, c := range []struct {
			kind Kind
			file string
			ext  string
		}{{KindCrash, report, ".json"}, {KindAnnotation, bundle, ".zip"}, {KindArtifact, artifact + ".moved", ".png"}} {
			recs := all(t, r, Query{Session: sess, Kinds: []Kind{c.kind}})
			if len(recs) != 1 || recs[0].Blob == "" || filepath.Ext(recs[0].Blob) != c.ext {
				t.Fatalf("%s records = %+v", c.kind, recs)
			}
			mine, err := os.Stat(filepath.Join(dir, filepath.FromSlash(recs[0].Blob)))
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := os.Stat(c.file)
			if err != nil {
				t.Fatal(err)
			}
			if !os.SameFile(mine, theirs) {
				t.Errorf("%s: the recording holds a copy of %s, not a link", c.kind, c.file)
			}
		}
		crash := all(t, r, Query{Session: sess, Kinds: []Kind{KindCrash}, Search: "sigsegv"})
		if len(crash) != 1 || !crash[0].At.Equal(now.Add(-time.Hour)) || string(crash[0].Data) != `{"id":"c1","kind":"native_crash"}` {
			t.Errorf("crash = %+v", crash)
		}
		handoff := all(t, r, Query{Session: sess, Kinds: []Kind{KindControl}, Search: "crash.handoff"})
		if len(handoff) != 1 || strings.Contains(string(handoff[0].Data), "dHJhY2U=") || !strings.Contains(string(handoff[0].Data), `"payloadBytes"`) {
			t.Errorf("the crash.handoff request is stored twice: %+v", handoff)
		}
	})
	t.Run("unknown kept verbatim", func(t *testing.T) {
		m := all(t, r, Query{Session: sess, Kinds: []Kind{KindMessage}})
		if len(m) != 1 || string(m[0].Data) != `{"type":"CLIENT_FUTURE_THING","sentAtUtc":"2026-03-20T10:00:07Z","novel":{"nested":[1,2,3]}}` {
			t.Errorf("message = %+v", m)
		}
	})
	t.Run("newest first", func(t *testing.T) {
		p, err := r.Records(ctx, Query{Session: sess, Newest: true, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Records) != 2 || p.Records[0].Kind != KindState || p.Records[0].Text != "disconnected" || p.Next == 0 {
			t.Errorf("newest = %+v", p)
		}
	})
}

// TestFullQueueDropsTelemetryNotTraffic holds the writer up and overfills the intake
// buffer: telemetry beyond it is dropped and counted, tool traffic is not.
func TestFullQueueDropsTelemetryNotTraffic(t *testing.T) {
	t.Parallel()
	r := open(t, t.TempDir(), func(o *Options) { o.QueueMessages = 10 })
	const sess = "app-001"
	r.writeMu.Lock() // the writer blocks on its first batch
	for i := range 50 {
		r.RecordMessage(sess, transport.MessageText, []byte(fmt.Sprintf(`{"type":"CLIENT_LOG","data":"line %d"}`, i)), time.Now())
		r.RecordTraffic(wire.TrafficEvent{SessionID: sess, At: time.Now(), Kind: wire.TrafficRequest, Type: wire.TypeQuery, Outcome: wire.TrafficOK})
	}
	r.writeMu.Unlock()
	waitIdle(t, r)
	u := r.Usage()
	counts, _ := r.Counts(context.Background(), sess)
	if counts[KindTraffic] != 50 {
		t.Errorf("traffic records = %d, want all 50", counts[KindTraffic])
	}
	if counts[KindLog]+u.Dropped != 50 || u.Dropped == 0 {
		t.Errorf("logs %d + dropped %d, want 50 with some dropped", counts[KindLog], u.Dropped)
	}
	sum, _ := r.Session(context.Background(), sess)
	if sum.Dropped != u.Dropped {
		t.Errorf("session dropped = %d, usage says %d", sum.Dropped, u.Dropped)
	}
}

// TestBudgetsEvictOldestFirst writes past both budgets: the oldest records go first, with
// their files, and the totals stay within the budgets.
func TestBudgetsEvictOldestFirst(t *testing.T) {
	t.Parallel()
	r := open(t, t.TempDir(), func(o *Options) {
		o.MaxBytes, o.MaxSessionBytes, o.MinFrameInterval = 200<<10, 120<<10, -1
	})
	r.packBytes = 16 << 10 // four frames a pack
	img := bytes.Repeat([]byte{0xff}, 4000)
	frame, _ := wire.AppendASJP(nil, wire.ASJPFrame{Format: 1, Quality: 50, CapturedAt: time.Now(), Width: 1, Height: 1, JPEG: img})
	for _, sess := range []string{"a-001", "b-001"} {
		for range 60 {
			r.RecordMessage(sess, transport.MessageBinary, frame, time.Now())
			waitIdle(t, r)
		}
	}
	u := r.Usage()
	if u.Bytes > u.MaxBytes || u.Evicted == 0 {
		t.Errorf("usage = %+v", u)
	}
	for _, sess := range []string{"a-001", "b-001"} {
		s, _ := r.Session(context.Background(), sess)
		if s.Bytes > u.MaxSessionBytes || s.Evicted == 0 || s.Records == 0 {
			t.Errorf("%s = %+v", sess, s)
		}
	}
	// Session a's oldest frames went first: what is left is its newest.
	recs := all(t, r, Query{Session: "b-001"})
	if recs[len(recs)-1].Seq != r.nextSeq {
		t.Errorf("newest record evicted")
	}
	// The frames are packed: a pack goes with the last of its frames, so what is left on
	// disk is the remaining frames and less than a pack more per session, and each
	// remaining frame reads back.
	for _, sess := range []string{"a-001", "b-001"} {
		var live, disk int64
		for _, rec := range all(t, r, Query{Session: sess}) {
			live += rec.BlobBytes
			f, err := r.OpenBlob(rec)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(f)
			f.Close()
			if !bytes.Equal(b, img) {
				t.Fatalf("record %d reads back %d bytes, not its frame", rec.Seq, len(b))
			}
		}
		entries, _ := os.ReadDir(r.dir + "/" + BlobDir + "/" + sess + "/frame")
		for _, e := range entries {
			info, _ := e.Info()
			disk += info.Size()
		}
		if disk < live || disk >= live+r.packBytes {
			t.Errorf("%s: %d bytes of packs in %d files for %d bytes of frames", sess, disk, len(entries), live)
		}
	}
}

// TestFollowSeesNewRecords: Follow delivers what is there, then what arrives.
func TestFollowSeesNewRecords(t *testing.T) {
	t.Parallel()
	r := open(t, t.TempDir(), nil)
	const sess = "app-001"
	r.RecordControl(sess, "client.log", []byte(`{"data":"first"}`), true, "", time.Now())
	waitIdle(t, r)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	got := make(chan string, 10)
	done := make(chan error, 1)
	go func() {
		done <- r.Follow(ctx, Query{Session: sess, Kinds: []Kind{KindLog}}, func(rec Record) error {
			got <- rec.Text
			if rec.Text == "second" {
				return io.EOF
			}
			return nil
		})
	}()
	if s := <-got; s != "first" {
		t.Fatalf("first = %q", s)
	}
	r.RecordControl(sess, "client.log", []byte(`{"data":"second"}`), true, "", time.Now())
	if s := <-got; s != "second" {
		t.Fatalf("second = %q", s)
	}
	if err := <-done; err != io.EOF {
		t.Fatalf("Follow = %v", err)
	}
}

func TestFrameThinning(t *testing.T) {
	t.Parallel()
	r := open(t, t.TempDir(), func(o *Options) { o.MinFrameInterval = 100 * time.Millisecond })
	frame, _ := wire.AppendASJP(nil, wire.ASJPFrame{Format: 1, CapturedAt: time.Now(), Width: 1, Height: 1, JPEG: []byte{1}})
	base := time.Now()
	for i := range 10 {
		r.RecordMessage("s-001", transport.MessageBinary, frame, base.Add(time.Duration(i)*40*time.Millisecond))
	}
	waitIdle(t, r)
	counts, _ := r.Counts(context.Background(), "s-001")
	// 0, 120, 240, 360: four frames at least 100 ms apart out of ten 40 ms apart.
	if counts[KindFrame] != 4 || r.Usage().Thinned != 6 {
		t.Errorf("frames = %d, thinned = %d", counts[KindFrame], r.Usage().Thinned)
	}
}

// TestExportImportRoundTrip exports a recording with a redaction list, imports the archive
// and finds the same records, files and redactions.
func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	r := open(t, t.TempDir(), nil)
	const sess = "com-example-app-001"
	now := time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)
	r.RecordSession(sess, "connected", now, []byte(`{"id":"com-example-app-001","appId":"com.example.app"}`))
	for _, line := range officialLines(t) {
		r.RecordMessage(sess, transport.MessageText, line, now)
	}
	img := testJPEG(t)
	frame, _ := wire.AppendASJP(nil, wire.ASJPFrame{Format: 1, Quality: 60, CapturedAt: now, Width: 8, Height: 16, JPEG: img})
	r.RecordMessage(sess, transport.MessageBinary, frame, now)
	r.RecordControl(sess, "client.log", []byte(`{"data":"login ok session_token=abc123 user=ann"}`), true, "", now)
	r.RecordTraffic(wire.TrafficEvent{SessionID: sess, At: now, Kind: wire.TrafficRequest, Type: wire.TypeCall, RequestID: "r1",
		ToolIDs: []string{"notes.get"}, Bytes: 100, Outcome: wire.TrafficOK, Payload: []byte(`{"toolId":"notes.get"}`)})
	r.RecordTraffic(wire.TrafficEvent{SessionID: sess, At: now, Kind: wire.TrafficResponse, Type: wire.TypeResult, RequestID: "r1",
		ToolIDs: []string{"notes.get"}, Bytes: 250, Outcome: wire.TrafficOK,
		Payload: []byte(`{"success":true,"data":{"apiKey":"k-123","headers":[{"name":"X-Tenant","value":"acme"}]}}`)})
	r.RecordTraffic(wire.TrafficEvent{SessionID: sess, At: now, Kind: wire.TrafficDenied, Type: wire.TypeCall,
		ToolIDs: []string{"notes.delete_all"}, Outcome: wire.TrafficError, ErrorCode: string(wire.CodePolicyNotGranted)})
	waitIdle(t, r)
	before := all(t, r, Query{Session: sess})

	var zipBuf bytes.Buffer
	err := r.Export(context.Background(), sess, &zipBuf, ExportOptions{Redact: []string{"session_token", "apiKey", "x-tenant"}, Producer: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"abc123", "k-123", "acme"} {
		if bytes.Contains(zipBuf.Bytes(), []byte(secret)) { // manifest and records are deflated; check after import too
			t.Errorf("archive holds %q", secret)
		}
	}
	zr, err := zip.NewReader(bytes.NewReader(zipBuf.Bytes()), int64(zipBuf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	mf, _ := zr.Open(ManifestName)
	var m Manifest
	if b, _ := io.ReadAll(mf); json.Unmarshal(b, &m) != nil {
		t.Fatal("manifest does not read")
	}
	if tr := m.Traffic; tr.Calls != 1 || tr.Denied != 1 || tr.Errors != 0 || tr.BytesSent != 100 || tr.BytesReceived != 250 || tr.Tools["notes.get"] != 1 {
		t.Errorf("traffic summary %+v", tr)
	}
	// Entries carry times (archive tools show 1980 for none): the manifest and the records
	// the export's, each record's file its record's.
	when := map[string]time.Time{ManifestName: m.ExportedAt, RecordsName: m.ExportedAt}
	for _, rec := range before {
		if rec.Blob != "" {
			when[archiveBlobName(rec)] = rec.At
		}
	}
	for _, f := range zr.File {
		want, ok := when[f.Name]
		if !ok || !f.Modified.Equal(want.Truncate(time.Second)) {
			t.Errorf("%s: modified %v, want %v", f.Name, f.Modified, want)
		}
	}
	sum, err := r.Import(context.Background(), bytes.NewReader(zipBuf.Bytes()), int64(zipBuf.Len()), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.ID != sess+"-import-1" || sum.Origin != "import" || sum.AppID != "com.example.app" {
		t.Errorf("imported = %+v", sum)
	}
	after := all(t, r, Query{Session: sum.ID})
	if len(after) != len(before) {
		t.Fatalf("imported %d records, exported %d", len(after), len(before))
	}
	for i := range after {
		a, b := after[i], before[i]
		if a.Kind != b.Kind || !a.At.Equal(b.At) || a.Level != b.Level || (a.Blob == "") != (b.Blob == "") {
			t.Errorf("record %d: %+v, was %+v", i, a, b)
		}
		text := string(a.Data) + a.Text
		for _, secret := range []string{"abc123", "k-123", "acme"} {
			if strings.Contains(text, secret) {
				t.Errorf("imported record holds %q: %s", secret, text)
			}
		}
		if a.Kind == KindFrame && a.Blob != "" {
			f, _ := r.OpenBlob(a)
			b, _ := io.ReadAll(f)
			f.Close()
			if a.BlobBytes == int64(len(img)) && !bytes.Equal(b, img) {
				t.Errorf("frame file differs")
			}
		}
	}
	if _, err := r.Import(context.Background(), bytes.NewReader([]byte("not a zip")), 9, ImportOptions{}); err == nil {
		t.Error("imported garbage")
	}
}
