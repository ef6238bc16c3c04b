package control

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/recording"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// recordingHost is a host that records, unstarted (nothing connects: the recorder is fed
// directly), behind a real control socket.
func recordingHost(t *testing.T, record bool) (*hostapi.Client, *recording.Recorder) {
	t.Helper()
	var rec *recording.Recorder
	opts := host.Options{}
	if record {
		var err error
		rec, err = recording.Open(recording.Options{Dir: t.TempDir(), MinFrameInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rec.Close() })
		opts.Recorder = rec
	}
	srv, err := host.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return serve(t, New(srv, Options{Version: "test", Recorder: rec})), rec
}

// TestRecordingsOverTheSocket drives every recording endpoint through the client: the
// list, pages with each filter, follow, a record's file, export and import.
func TestRecordingsOverTheSocket(t *testing.T) { // not parallel: Listen sets the process umask for a moment
	c, rec := recordingHost(t, true)
	ctx := t.Context()
	const id = "com-example-app-001"
	t0 := time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)
	rec.RecordSession(id, "connected", t0, []byte(`{"id":"`+id+`","appId":"com.example.app","deviceName":"Pixel 8","platform":"Android","state":"connected","maxToolPolicy":"read","connectedAt":"2026-03-20T10:00:00Z"}`))
	for i, line := range []string{"[Info] started", "[Error] payment declined", "[Warning] slow"} {
		rec.RecordControl(id, "client.log", []byte(`{"data":"`+line+`"}`), true, "", t0.Add(time.Duration(i+1)*time.Second))
	}
	jpeg := []byte{0xff, 0xd8, 0xff, 0xd9}
	frame, err := wire.AppendASJP(nil, wire.ASJPFrame{Format: wire.ASJPFormatJPEG, Quality: 50, CapturedAt: t0.Add(5 * time.Second), Width: 2, Height: 2, JPEG: jpeg})
	if err != nil {
		t.Fatal(err)
	}
	rec.RecordMessage(id, transport.MessageBinary, frame, t0.Add(5*time.Second))
	rec.RecordSession(id, "disconnected", t0.Add(time.Minute), nil)
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	st, err := c.Status(ctx)
	if err != nil || st.Recording == nil || st.Recording.Records != 6 || st.Recording.MaxBytes != recording.DefaultMaxBytes {
		t.Fatalf("status recording = %+v (%v)", st.Recording, err)
	}
	list, err := c.Recordings(ctx)
	if err != nil || len(list.Sessions) != 1 {
		t.Fatalf("recordings = %+v (%v)", list, err)
	}
	if s := list.Sessions[0]; s.ID != id || s.State != hostapi.StateDisconnected || s.DeviceName != "Pixel 8" || s.MaxToolPolicy != wire.PolicyRead ||
		s.Recording == nil || s.Recording.Records != 6 || s.Recording.Origin != "live" || !s.DisconnectedAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("recorded session = %+v %+v", s, s.Recording)
	}
	if s, err := c.Session(ctx, id); err != nil || s.Recording == nil || s.AppID != "com.example.app" {
		t.Errorf("a recorded session the registry does not hold: %+v (%v)", s, err)
	}

	texts := func(req hostapi.RecordsRequest) string {
		t.Helper()
		p, err := c.Records(ctx, id, req)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range p.Records {
			out = append(out, string(r.Kind)+":"+r.Text)
		}
		return strings.Join(out, "|")
	}
	for _, tc := range []struct {
		req  hostapi.RecordsRequest
		want string
	}{
		{hostapi.RecordsRequest{Kinds: []hostapi.RecordKind{hostapi.RecordLog}}, "log:[Info] started|log:[Error] payment declined|log:[Warning] slow"},
		{hostapi.RecordsRequest{Kinds: []hostapi.RecordKind{hostapi.RecordLog}, Level: "warn"}, "log:[Error] payment declined|log:[Warning] slow"},
		{hostapi.RecordsRequest{Search: "PAYMENT"}, "log:[Error] payment declined"},
		{hostapi.RecordsRequest{Kinds: []hostapi.RecordKind{hostapi.RecordLog, hostapi.RecordState}, Since: t0.Add(2 * time.Second), Until: t0.Add(time.Hour)},
			"log:[Error] payment declined|log:[Warning] slow|state:disconnected"},
		{hostapi.RecordsRequest{Newest: true, Limit: 2}, "state:disconnected|frame:2x2"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if got := texts(tc.req); got != tc.want {
				t.Errorf("%+v:\n got %s\nwant %s", tc.req, got, tc.want)
			}
		})
	}
	p, err := c.Records(ctx, id, hostapi.RecordsRequest{Limit: 4})
	if err != nil || len(p.Records) != 4 || p.Next == 0 {
		t.Fatalf("first page %+v (%v)", p, err)
	}
	p, err = c.Records(ctx, id, hostapi.RecordsRequest{After: p.Next})
	if err != nil || len(p.Records) != 2 || p.Next != 0 {
		t.Fatalf("second page %+v (%v)", p, err)
	}

	// A record's file.
	fp, _ := c.Records(ctx, id, hostapi.RecordsRequest{Kinds: []hostapi.RecordKind{hostapi.RecordFrame}})
	b, err := c.Blob(ctx, id, fp.Records[0].Seq)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(b.Body)
	b.Body.Close()
	if !bytes.Equal(got, jpeg) || b.MimeType != "image/jpeg" || b.SizeBytes != int64(len(jpeg)) || !strings.HasSuffix(b.Name, ".jpg") {
		t.Errorf("blob %+v %x", b, got)
	}
	if _, err := c.Blob(ctx, "other-001", fp.Records[0].Seq); wire.CodeOf(err) != wire.CodeSessionNotFound {
		t.Errorf("another session's record: %v", err)
	}

	// Follow: what is there, then what comes.
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	seen := make(chan hostapi.Record, 16)
	followed := make(chan error, 1)
	go func() {
		followed <- c.Follow(fctx, id, hostapi.RecordsRequest{Kinds: []hostapi.RecordKind{hostapi.RecordLog}, Level: "error"}, func(r hostapi.Record) error {
			seen <- r
			return nil
		})
	}()
	if r := <-seen; r.Text != "[Error] payment declined" {
		t.Fatalf("followed %+v", r)
	}
	rec.RecordControl(id, "client.log", []byte(`{"data":"[Info] not an error"}`), true, "", t0.Add(2*time.Minute))
	rec.RecordControl(id, "client.log", []byte(`{"data":"[Error] later"}`), true, "", t0.Add(2*time.Minute))
	if r := <-seen; r.Text != "[Error] later" {
		t.Fatalf("followed %+v", r)
	}
	cancel()
	if err := <-followed; err != context.Canceled {
		t.Errorf("Follow ended with %v", err)
	}

	// Export, redacted, and import it back as a new recording.
	var zipped bytes.Buffer
	if err := c.Export(ctx, id, hostapi.ExportRequest{Redact: []string{"data"}}, &zipped); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(zipped.Bytes()), int64(zipped.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ","); !strings.HasPrefix(got, "manifest.json,records.jsonl,blobs/frame/") {
		t.Errorf("archive holds %s", got)
	}
	imported, err := c.Import(ctx, hostapi.ImportRequest{}, bytes.NewReader(zipped.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if imported.ID != id+"-import-1" || imported.Recording == nil || imported.Recording.Origin != "import" || imported.Recording.Records != 8 {
		t.Errorf("imported %+v %+v", imported, imported.Recording)
	}
	if got := texts(hostapi.RecordsRequest{Kinds: []hostapi.RecordKind{hostapi.RecordLog}, Newest: true, Limit: 1}); got != "log:[Error] later" {
		t.Errorf("the original's last log = %s", got)
	}
	ip, _ := c.Records(ctx, imported.ID, hostapi.RecordsRequest{Kinds: []hostapi.RecordKind{hostapi.RecordLog}, Limit: 1})
	if len(ip.Records) != 1 || strings.Contains(string(ip.Records[0].Data), "started") {
		t.Errorf("imported log not redacted: %+v", ip.Records)
	}

	// Refusals.
	for name, err := range map[string]error{
		"unknown kind": func() error {
			_, err := c.Records(ctx, id, hostapi.RecordsRequest{Kinds: []hostapi.RecordKind{"nope"}})
			return err
		}(),
		"unknown level":      func() error { _, err := c.Records(ctx, id, hostapi.RecordsRequest{Level: "loud"}); return err }(),
		"no session":         func() error { _, err := c.Records(ctx, "nosuch-001", hostapi.RecordsRequest{}); return err }(),
		"follow, no session": c.Follow(ctx, "nosuch-001", hostapi.RecordsRequest{}, func(hostapi.Record) error { return nil }),
		"export, no session": c.Export(ctx, "nosuch-001", hostapi.ExportRequest{}, io.Discard),
		"not an archive": func() error {
			_, err := c.Import(ctx, hostapi.ImportRequest{}, strings.NewReader("PK not a zip"))
			return err
		}(),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestRecordingOff: a host that records nothing says so, and lists no recordings.
func TestRecordingOff(t *testing.T) { // not parallel: Listen sets the process umask for a moment
	c, _ := recordingHost(t, false)
	ctx := t.Context()
	if st, err := c.Status(ctx); err != nil || st.Recording != nil {
		t.Errorf("status %+v (%v)", st, err)
	}
	if l, err := c.Recordings(ctx); err != nil || len(l.Sessions) != 0 {
		t.Errorf("recordings %+v (%v)", l, err)
	}
	if _, err := c.Records(ctx, "a-001", hostapi.RecordsRequest{}); wire.CodeOf(err) != wire.CodeRecordingOff {
		t.Errorf("records: %v", err)
	}
}

// TestImportedCrashesListed: with a host running, an imported recording's crash reports and
// annotations — which the host's own directories do not hold — are listed from its
// records, completed with what an imported record keeps elsewhere (its time, its id).
func TestImportedCrashesListed(t *testing.T) { // not parallel: Listen sets the process umask for a moment
	c, _ := recordingHost(t, true)
	ctx := t.Context()
	archive, err := os.ReadFile(filepath.Join("..", "..", "recording", "testdata", "offline-capture-aes.zip"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Import(ctx, hostapi.ImportRequest{Password: "correct horse battery"}, bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	crashes, err := c.Crashes(ctx, s.ID)
	if err != nil || len(crashes.Crashes) != 1 {
		t.Fatalf("Crashes = %+v, %v", crashes, err)
	}
	if cr := crashes.Crashes[0]; cr.ID != "r1" || cr.SessionID != s.ID || !cr.OccurredAt.Equal(time.Date(2026, 3, 20, 10, 4, 59, 0, time.UTC)) || cr.Kind != "native_crash" {
		t.Errorf("the crash report: %+v", cr)
	}
	notes, err := c.Annotations(ctx, s.ID)
	if err != nil || len(notes.Annotations) != 1 {
		t.Fatalf("Annotations = %+v, %v", notes, err)
	}
	if a := notes.Annotations[0]; a.ID != "4a1b2c3d4e5f60718293a4b5c6d7e8f9" || a.CapturedAt.IsZero() || a.SizeBytes != 243 {
		t.Errorf("the annotation: %+v", a)
	}
	if _, err := c.Crashes(ctx, "no-such-session"); wire.CodeOf(err) != wire.CodeSessionNotFound {
		t.Errorf("an unknown session: %v", err)
	}
}
