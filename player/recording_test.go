package player

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/flow"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// The fake backend's recording: what the timeline asked, and two records with files.
func (f *fakeBackend) Records(_ context.Context, sid string, req hostapi.RecordsRequest) (*hostapi.Records, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.recordsAsked = append(f.recordsAsked, req)
	if len(req.Kinds) == 1 && req.Kinds[0] == hostapi.RecordTraffic {
		return &hostapi.Records{Schema: hostapi.SchemaRecords, SessionID: sid, Records: f.traffic}, nil
	}
	return &hostapi.Records{Schema: hostapi.SchemaRecords, SessionID: sid, Records: []hostapi.Record{
		{Seq: 7, Session: sid, Kind: hostapi.RecordFrame, Blob: "blobs/s-1/frame/7.jpg", BlobBytes: 4}}}, nil
}

func (f *fakeBackend) Blob(_ context.Context, sid string, seq int64) (*hostapi.Blob, error) {
	name := map[int64]string{7: "7.jpg", 8: "8.html"}[seq]
	if sid != "s-1" || name == "" {
		return nil, &hostapi.APIError{Status: http.StatusNotFound, Code: wire.CodeResourceNotFound, Message: "no file"}
	}
	return &hostapi.Blob{Name: name, SizeBytes: 4, Body: io.NopCloser(strings.NewReader("\xff\xd8\xff\xd9"))}, nil
}

// TestTimelineAPI: the timeline's pages pass their filters to the control API unchanged,
// and a record's file is served inline only when its type is harmless — an app-named
// .html never runs in the player's origin.
func TestTimelineAPI(t *testing.T) {
	t.Parallel()
	tp := newTestPlayer(t)
	w := tp.do(t, req{path: "/api/sessions/s-1/recording?kind=frame,log&after=5&limit=100&since=2026-03-20T10:00:00Z", cookie: true})
	got := decode[hostapi.Records](t, w)
	if w.Code != 200 || len(got.Records) != 1 || got.Records[0].Seq != 7 {
		t.Fatalf("%d %+v", w.Code, got)
	}
	asked := tp.backend.recordsAsked[0]
	if len(asked.Kinds) != 2 || asked.Kinds[1] != hostapi.RecordLog || asked.After != 5 || asked.Limit != 100 ||
		!asked.Since.Equal(time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("asked %+v", asked)
	}
	if w := tp.do(t, req{path: "/api/sessions/s-1/recording?after=x", cookie: true}); w.Code != 400 {
		t.Errorf("a bad cursor: %d", w.Code)
	}
	w = tp.do(t, req{path: "/api/sessions/s-1/recording/7/file", cookie: true})
	if w.Code != 200 || w.Header().Get("Content-Type") != "image/jpeg" || !strings.Contains(w.Header().Get("Cache-Control"), "immutable") ||
		w.Body.String() != "\xff\xd8\xff\xd9" {
		t.Errorf("frame: %d %v", w.Code, w.Header())
	}
	w = tp.do(t, req{path: "/api/sessions/s-1/recording/8/file", cookie: true})
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/octet-stream" || !strings.HasPrefix(w.Header().Get("Content-Disposition"), "attachment") {
		t.Errorf("an .html record file must download: %d %v", w.Code, w.Header())
	}
	if w := tp.do(t, req{path: "/api/sessions/s-1/recording/9/file", cookie: true}); w.Code != 404 {
		t.Errorf("no file: %d", w.Code)
	}
	if w := tp.do(t, req{path: "/api/sessions/s-1/recording/7/file"}); w.Code != 401 {
		t.Errorf("without the cookie: %d", w.Code)
	}
}

func (f *fakeBackend) Session(_ context.Context, id string) (*hostapi.Session, error) {
	for _, s := range f.sessions {
		if s.ID == id {
			return &s, nil
		}
	}
	return nil, &hostapi.APIError{Status: http.StatusNotFound, Code: wire.CodeSessionNotFound, Message: "no session " + id}
}

// TestSaveAsFlow: the Timeline's "Save as flow" downloads the calls of the marked range as
// a flow, with the range and origins passed to the recording unchanged.
func TestSaveAsFlow(t *testing.T) {
	t.Parallel()
	tp := newTestPlayer(t)
	rec := func(dir, typ, id, payload string) hostapi.Record {
		return hostapi.Record{Kind: hostapi.RecordTraffic, At: time.Date(2026, 3, 20, 10, 30, 0, 0, time.UTC),
			Data: jsontext.Value(`{"direction":"` + dir + `","type":"` + typ +
				`","requestId":"` + id + `","origin":"player","outcome":"ok","payload":` + payload + `}`)}
	}
	tp.backend.mu.Lock()
	tp.backend.traffic = []hostapi.Record{
		rec("request", "tool.call", "1", `{"toolId":"notes.create","arguments":{"title":"From the player"}}`),
		rec("response", "tool.result", "1", `{"toolId":"notes.create","success":true,"result":{"id":"n9","title":"From the player"}}`),
	}
	tp.backend.mu.Unlock()
	w := tp.do(t, req{path: "/api/sessions/s-1/flow?since=2026-03-20T10:00:00Z&until=2026-03-20T11:00:00Z&origin=player", cookie: true})
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Disposition"), `attachment; filename="s-1.flow.yaml"`) {
		t.Fatalf("%d %v %s", w.Code, w.Header(), w.Body)
	}
	f, err := flow.Parse("saved.yaml", w.Body.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, w.Body)
	}
	if len(f.Steps) != 1 || f.Steps[0].Tool != "notes.create" {
		t.Errorf("steps %+v", f.Steps)
	}
	tp.backend.mu.Lock()
	asked := tp.backend.recordsAsked[len(tp.backend.recordsAsked)-1]
	tp.backend.mu.Unlock()
	if !asked.Since.Equal(time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)) || !asked.Until.Equal(time.Date(2026, 3, 20, 11, 0, 0, 0, time.UTC)) {
		t.Errorf("asked %+v", asked)
	}
	if w := tp.do(t, req{path: "/api/sessions/s-1/flow"}); w.Code != 401 {
		t.Errorf("without the cookie: %d", w.Code)
	}
}
