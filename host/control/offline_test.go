package control

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/player"
	"github.com/ansight-go/ansight/recording"
	"github.com/ansight-go/ansight/wire"
)

// TestOfflineBackend: with no host, a read-only Backend over recordings lists, describes,
// pages and exports them, lists crash reports from their records, refuses what needs a
// host with CodeHostUnavailable — and the player shows an archive through it.
func TestOfflineBackend(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := recording.Open(recording.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)
	w.RecordSession("s-1", "connected", at, []byte(`{"id":"s-1","appId":"com.example.app","deviceName":"Pixel","state":"connected"}`))
	w.RecordControl("s-1", "client.log", []byte(`{"data":"[Error] boom"}`), true, "", at)
	report := filepath.Join(t.TempDir(), "report.json")
	os.WriteFile(report, []byte(`{"reportId":"r1"}`), 0o600)
	w.RecordKept("s-1", string(recording.KindCrash), "panic r1", at, []byte(`{"id":"c1","reportId":"r1","sessionId":"s-1","kind":"panic","occurredAt":"2026-03-20T10:00:00Z"}`), report)
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.Close()
	ro, err := recording.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	b := NewOffline(ro, Options{Version: "test"})
	ctx := context.Background()
	if s, err := b.Session(ctx, "s-1"); err != nil || s.AppID != "com.example.app" || s.State != hostapi.StateDisconnected || s.Recording == nil {
		t.Errorf("Session = %+v, %v", s, err)
	}
	if list, err := b.Recordings(ctx); err != nil || len(list.Sessions) != 1 {
		t.Errorf("Recordings = %+v, %v", list, err)
	}
	if live, err := b.Sessions(ctx); err != nil || len(live.Sessions) != 0 {
		t.Errorf("Sessions = %+v, %v", live, err)
	}
	if p, err := b.Records(ctx, "s-1", hostapi.RecordsRequest{Kinds: []hostapi.RecordKind{hostapi.RecordLog}}); err != nil || len(p.Records) != 1 {
		t.Errorf("Records = %+v, %v", p, err)
	}
	if c, err := b.Crashes(ctx, "s-1"); err != nil || len(c.Crashes) != 1 || c.Crashes[0].ReportID != "r1" {
		t.Errorf("Crashes = %+v, %v", c, err)
	}
	var archive bytes.Buffer
	if err := b.Export(ctx, "s-1", hostapi.ExportRequest{Format: recording.FormatOfficial, Sanitize: true}, &archive); err != nil || archive.Len() == 0 {
		t.Fatalf("Export = %v", err)
	}
	for name, err := range map[string]error{
		"call":   func() error { _, err := b.Call(ctx, "s-1", hostapi.CallRequest{ToolID: "x"}, nil); return err }(),
		"invite": func() error { _, err := b.Invites(ctx); return err }(),
		"delete": b.DeleteRecording(ctx, "s-1"),
		"import": func() error {
			_, err := b.Import(ctx, hostapi.ImportRequest{}, bytes.NewReader(archive.Bytes()))
			return err
		}(),
	} {
		if wire.CodeOf(err) != wire.CodeHostUnavailable {
			t.Errorf("%s without a host: %v", name, err)
		}
	}

	// The player over an archive, not imported.
	p := filepath.Join(t.TempDir(), "official.zip")
	os.WriteFile(p, archive.Bytes(), 0o600)
	arec, sum, err := recording.OpenArchive(ctx, p, 1<<30, recording.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer arec.Close()
	pl, err := player.New(NewOffline(arec, Options{}), player.Options{Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	get := func(path string, cookies []*http.Cookie) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", path, nil)
		r.Host = "127.0.0.1:1"
		for _, c := range cookies {
			r.AddCookie(c)
		}
		rw := httptest.NewRecorder()
		pl.ServeHTTP(rw, r)
		return rw
	}
	login := get("/?token=tok", nil)
	res := get("/api/sessions/"+sum.ID+"/recording?kind=log", login.Result().Cookies())
	if res.Code != 200 || !strings.Contains(res.Body.String(), "[Error] boom") {
		t.Errorf("the player's timeline of the archive: %d %s", res.Code, res.Body.String())
	}
}
