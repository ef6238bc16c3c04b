package player

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

func decode[T any](t *testing.T, w *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("answer %d %q: %v", w.Code, w.Body, err)
	}
	return v
}

func TestToolForm(t *testing.T) {
	t.Parallel()
	tp := newTestPlayer(t)
	w := tp.do(t, req{path: "/api/sessions/s-1/tools/notes.create", cookie: true})
	tf := decode[ToolForm](t, w)
	if w.Code != 200 || tf.Schema != SchemaToolForm || tf.Tool.ID != "notes.create" || tf.Form == nil ||
		len(tf.Form.Properties) != 2 || tf.Form.Properties[0].Name != "title" || !tf.Form.Properties[0].Required {
		t.Fatalf("%d %+v", w.Code, tf)
	}
	w = tp.do(t, req{path: "/api/sessions/s-1/tools/nope", cookie: true})
	if e := decode[hostapi.Error](t, w); w.Code != 404 || e.Code != wire.CodeNotFound {
		t.Errorf("unknown tool: %d %+v", w.Code, e)
	}
	w = tp.do(t, req{path: "/api/sessions/s-9/tools/notes.create", cookie: true})
	if e := decode[hostapi.Error](t, w); w.Code != 404 || e.Code != wire.CodeSessionNotFound {
		t.Errorf("unknown session: %d %+v", w.Code, e)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tp := newTestPlayer(t)
	for _, tc := range []struct {
		body  string
		valid bool
		paths []string
	}{
		{`{"title":"x"}`, true, nil},
		{`{}`, false, []string{"$.title"}},
		{``, false, []string{"$.title"}},
		{`{"title":"","n":9,"zz":1}`, false, []string{"$.title", "$.n", "$.zz"}},
		{`{"title":`, false, []string{"$"}},
	} {
		t.Run(tc.body, func(t *testing.T) {
			w := tp.do(t, req{method: "POST", path: "/api/sessions/s-1/tools/notes.create/validate", cookie: true, csrf: tp.csrfToken(), body: tc.body})
			v := decode[Validation](t, w)
			var paths []string
			for _, x := range v.Violations {
				paths = append(paths, x.Path)
			}
			if w.Code != 200 || v.Valid != tc.valid || fmt.Sprint(paths) != fmt.Sprint(tc.paths) {
				t.Errorf("%s: %d %+v", tc.body, w.Code, v)
			}
		})
	}
	tp.backend.tool.ArgumentEncoding = wire.ArgumentEncodingFlattenedString
	w := tp.do(t, req{method: "POST", path: "/api/sessions/s-1/tools/notes.create/validate", cookie: true, csrf: tp.csrfToken(), body: `{}`})
	if v := decode[Validation](t, w); !v.Valid || v.Skipped == "" {
		t.Errorf("flattened-string: %+v", v)
	}
}

func TestCallServesArtifacts(t *testing.T) {
	t.Parallel()
	tp := newTestPlayer(t)
	shot := filepath.Join(tp.dir, "s-1", "screen shot.png")
	writeFile(t, shot, []byte("\x89PNG fake"))
	page := filepath.Join(tp.dir, "s-1", "page.html")
	writeFile(t, page, []byte("<script>alert(1)</script>"))
	outside := filepath.Join(t.TempDir(), "secret.png")
	writeFile(t, outside, []byte("secret"))
	tp.backend.answer = &hostapi.Call{Schema: hostapi.SchemaCall, SessionID: "s-1", ToolID: "ui.get_screenshot", Success: true,
		Result: &wire.Result{ToolID: "ui.get_screenshot", Success: true},
		Artifacts: []hostapi.Artifact{
			{TransferID: "a", Path: shot, Status: "complete", MimeType: "image/png"},
			{TransferID: "b", Path: outside, Status: "complete"},
			{TransferID: "c", Status: "failed", Error: "gone"},
			{TransferID: "d", Path: page, Status: "complete"},
		}}
	w := tp.do(t, req{method: "POST", path: "/api/sessions/s-1/call", cookie: true, csrf: tp.csrfToken(),
		body: `{"toolId":"ui.get_screenshot","arguments":{"format":"png"},"after":{"include":["visualTree"]}}`})
	ans := decode[CallAnswer](t, w)
	if w.Code != 200 || ans.Schema != SchemaCall || !ans.Call.Success || len(ans.ArtifactURLs) != 2 ||
		ans.ArtifactURLs["a"] != "/api/artifacts/s-1/screen%20shot.png" {
		t.Fatalf("%d %+v", w.Code, ans)
	}
	if got := tp.backend.calls[0]; got.ToolID != "ui.get_screenshot" || string(got.Arguments) != `{"format":"png"}` || got.After == nil {
		t.Errorf("the backend got %+v", got)
	}
	w = tp.do(t, req{path: ans.ArtifactURLs["a"], cookie: true})
	if w.Code != 200 || w.Header().Get("Content-Type") != "image/png" || w.Body.String() != "\x89PNG fake" {
		t.Errorf("artifact: %d %q %q", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	w = tp.do(t, req{path: ans.ArtifactURLs["d"], cookie: true})
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/octet-stream" || !strings.HasPrefix(w.Header().Get("Content-Disposition"), "attachment") {
		t.Errorf("an HTML artifact must download, not render: %d %v", w.Code, w.Header())
	}
	if err := os.Symlink(outside, filepath.Join(tp.dir, "link.png")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/api/artifacts/../player.go", "/api/artifacts/%2e%2e/secret.png", "/api/artifacts/link.png",
		"/api/artifacts/s-1", "/api/artifacts/nope.png", "/api/artifacts//etc/passwd"} {
		if w := tp.do(t, req{path: p, cookie: true}); w.Code == 200 {
			t.Errorf("%s served: %q", p, w.Body)
		}
	}
	if w := tp.do(t, req{path: ans.ArtifactURLs["a"]}); w.Code != 401 {
		t.Errorf("artifact without the cookie: %d", w.Code)
	}
}

// TestRecords: the session page lists the crash reports and annotations an app handed
// over, with URLs for the files kept in the session's directory (and none elsewhere).
func TestRecords(t *testing.T) {
	t.Parallel()
	tp := newTestPlayer(t)
	report := filepath.Join(tp.dir, "s-1", "crashes", "a1", "report.json")
	writeFile(t, report, []byte(`{"schema":"ansight.crash.v1"}`))
	trace := filepath.Join(tp.dir, "s-1", "crashes", "a1", "native.trace")
	writeFile(t, trace, []byte("#00 pc 0004f3"))
	bundle := filepath.Join(tp.dir, "s-1", "annotations", "b2.ansightannotation")
	writeFile(t, bundle, []byte("PK"))
	tp.backend.crashes = []hostapi.CrashReport{{ID: "a1", ReportID: "r", SessionID: "s-1", Kind: "native_crash",
		Files: []hostapi.RecordFile{{Name: "report.json", Path: report}, {Name: "native.trace", Path: trace}, {Name: "x", Path: "/etc/passwd"}}}}
	tp.backend.notes = []hostapi.Annotation{{ID: "b2", SessionID: "s-1", Path: bundle, SizeBytes: 2}}
	w := tp.do(t, req{path: "/api/sessions/s-1/records", cookie: true})
	got := decode[Records](t, w)
	if w.Code != 200 || got.Schema != SchemaRecords || len(got.Crashes) != 1 || len(got.Annotations) != 1 || len(got.FileURLs) != 3 ||
		got.FileURLs[report] != "/api/artifacts/s-1/crashes/a1/report.json" {
		t.Fatalf("%d %+v", w.Code, got)
	}
	if w := tp.do(t, req{path: got.FileURLs[report], cookie: true}); w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
		t.Errorf("report.json: %d %v", w.Code, w.Header())
	}
	if w := tp.do(t, req{path: got.FileURLs[bundle], cookie: true}); w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Disposition"), "attachment") {
		t.Errorf("the bundle must download: %d %v", w.Code, w.Header())
	}
	if w := tp.do(t, req{path: "/api/sessions/s-1/records"}); w.Code != 401 {
		t.Errorf("records without the cookie: %d", w.Code)
	}
}

func TestBadRequests(t *testing.T) {
	t.Parallel()
	tp := newTestPlayer(t)
	tp.backend.answer = &tpAnswer
	calls := make([]string, 33)
	for i := range calls {
		calls[i] = `{"toolId":"x"}`
	}
	for _, tc := range []struct{ path, body string }{
		{"/api/sessions/s-1/call", `{"toolId":"x","toolid":"y"}`},
		{"/api/sessions/s-1/call", `{"toolId":1}`},
		{"/api/sessions/s-1/call", `{"toolId":"x"} {}`},
		{"/api/sessions/s-1/call", `[]`},
		{"/api/sessions/s-1/batch", `{"calls":[]}`},
		{"/api/sessions/s-1/batch", `{"calls":[` + strings.Join(calls, ",") + `]}`},
	} {
		t.Run(tc.path+" "+tc.body, func(t *testing.T) {
			w := tp.do(t, req{method: "POST", path: tc.path, cookie: true, csrf: tp.csrfToken(), body: tc.body})
			if e := decode[hostapi.Error](t, w); w.Code != 400 || e.Code != wire.CodeBadRequest {
				t.Errorf("%s %s: %d %+v", tc.path, tc.body, w.Code, e)
			}
		})
	}
	big := `{"toolId":"x","arguments":"` + strings.Repeat("a", maxBodyBytes) + `"}`
	if w := tp.do(t, req{method: "POST", path: "/api/sessions/s-1/call", cookie: true, csrf: tp.csrfToken(), body: big}); w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d", w.Code)
	}
	if w := tp.do(t, req{path: "/api/nothing", cookie: true}); w.Code != 404 {
		t.Errorf("unknown endpoint: %d", w.Code)
	}
}

func TestTrafficLog(t *testing.T) {
	t.Parallel()
	tp := newTestPlayer(t) // 3 entries per session
	file := filepath.Join(tp.dir, "s-1", "f.bin")
	for i, ev := range []wire.TrafficEvent{
		{SessionID: "s-1", Kind: wire.TrafficRequest, Type: wire.TypeCall, RequestID: "r1", ToolIDs: []string{"a.b"}, Bytes: 100, Outcome: wire.TrafficOK},
		{SessionID: "s-2", Kind: wire.TrafficRequest, Type: wire.TypeQuery, RequestID: "q", Outcome: wire.TrafficOK},
		{SessionID: "s-1", Kind: wire.TrafficResponse, Type: wire.TypeResult, RequestID: "r1", Bytes: 3000, PayloadBytes: 40000,
			EncodedBytes: 2900, Compressed: true, Duration: 1500 * time.Microsecond, Outcome: wire.TrafficOK},
		{SessionID: "s-1", Kind: wire.TrafficTransfer, Type: "asft", TransferID: "t1", Path: file, ReceivedBytes: 2_000_000,
			SizeBytes: 2_000_000, Duration: 2 * time.Second, Frames: 31, Outcome: wire.TrafficOK},
		{SessionID: "s-1", Kind: wire.TrafficResponse, Type: wire.TypeError, RequestID: "r2", Outcome: wire.TrafficError, ErrorCode: "boom"},
	} {
		ev.At = time.Unix(int64(i), 0)
		tp.OnTraffic(ev)
	}
	w := tp.do(t, req{path: "/api/sessions/s-1/traffic", cookie: true})
	tr := decode[Traffic](t, w)
	if tr.Capacity != 3 || len(tr.Entries) != 3 {
		t.Fatalf("%+v", tr)
	}
	r, x, e := tr.Entries[0], tr.Entries[1], tr.Entries[2]
	if r.RequestID != "r1" || r.DurationMS != 1.5 || !r.Compressed || r.PayloadBytes != 40000 || r.Seq >= x.Seq || x.Seq >= e.Seq {
		t.Errorf("response %+v", r)
	}
	if x.Kind != "transfer" || x.BytesPerSecond != 1_000_000 || x.ArtifactURL != "/api/artifacts/s-1/f.bin" || x.Frames != 31 {
		t.Errorf("transfer %+v", x)
	}
	if e.ErrorCode != "boom" || e.Outcome != "error" {
		t.Errorf("error %+v", e)
	}
	if tr := decode[Traffic](t, tp.do(t, req{path: "/api/sessions/s-2/traffic", cookie: true})); len(tr.Entries) != 1 {
		t.Errorf("s-2: %+v", tr)
	}
	if tr := decode[Traffic](t, tp.do(t, req{path: "/api/sessions/none/traffic", cookie: true})); tr.Entries == nil || len(tr.Entries) != 0 {
		t.Errorf("unknown session: %+v", tr)
	}
	tp.forget("s-1")
	if tr := decode[Traffic](t, tp.do(t, req{path: "/api/sessions/s-1/traffic", cookie: true})); len(tr.Entries) != 0 {
		t.Errorf("after eviction: %+v", tr)
	}
}

func TestTrackedSessionsBounded(t *testing.T) {
	t.Parallel()
	tp := newTestPlayer(t)
	for i := range maxTracked + 10 {
		tp.OnTraffic(wire.TrafficEvent{SessionID: fmt.Sprint("s-", i), Kind: wire.TrafficRequest})
	}
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if len(tp.traffic) != maxTracked || len(tp.order) != maxTracked || tp.traffic["s-0"] != nil {
		t.Errorf("%d logs, %d tracked", len(tp.traffic), len(tp.order))
	}
}

func TestLiveFrame(t *testing.T) {
	t.Parallel()
	tp := newTestPlayer(t)
	// No live frame yet: the recording's latest one, said to be so.
	if w := tp.do(t, req{path: "/api/sessions/s-1/frame", cookie: true}); w.Code != 200 || w.Header().Get("X-Ansight-Frame-Source") != "recording" ||
		w.Body.String() != "\xff\xd8\xff\xd9" {
		t.Fatalf("no live frame yet: %d %v", w.Code, w.Header())
	}
	if w := tp.do(t, req{path: "/api/sessions/s-2/frame", cookie: true}); w.Code != 404 {
		t.Fatalf("no frame at all: %d", w.Code)
	}
	jpeg := []byte{0xff, 0xd8, 1, 2, 3, 0xff, 0xd9}
	tp.OnFrame("s-1", wire.ASJPFrame{Format: wire.ASJPFormatJPEG, Quality: 70, Width: 390, Height: 844,
		Flags: wire.ASJPFlagKeyboardKnown | wire.ASJPFlagKeyboardVisible, JPEG: jpeg})
	w := tp.do(t, req{path: "/api/sessions/s-1/frame?seq=1", cookie: true})
	if w.Code != 200 || w.Header().Get("Content-Type") != "image/jpeg" || w.Body.String() != string(jpeg) {
		t.Errorf("frame: %d %v", w.Code, w.Header())
	}
	fs := tp.latestFrames()
	if len(fs) != 1 || fs[0].Width != 390 || !fs[0].KeyboardVisible || fs[0].Bytes != len(jpeg) || !strings.HasPrefix(fs[0].URL, "/api/sessions/s-1/frame?seq=") {
		t.Errorf("frames %+v", fs)
	}
}

// sse reads server-sent events from a live player.
type sse struct {
	r    *bufio.Reader
	resp *http.Response
}

func (s *sse) next(t *testing.T) (string, string) {
	t.Helper()
	var name, data string
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && name != "":
			return name, data
		case strings.HasPrefix(line, "event: "):
			name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
		}
	}
}

func TestEvents(t *testing.T) {
	t.Parallel()
	tp := newTestPlayer(t)
	tp.OnFrame("s-1", wire.ASJPFrame{Width: 1, Height: 1, JPEG: []byte{1}})
	ts := httptest.NewServer(tp)
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hr, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/api/events", nil)
	hr.AddCookie(&http.Cookie{Name: cookieName(hr.Host), Value: testToken})
	resp, err := ts.Client().Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	s := &sse{r: bufio.NewReader(resp.Body), resp: resp}
	if name, data := s.next(t); name != eventSessions || !strings.Contains(data, `"id":"s-1"`) {
		t.Fatalf("first event %s %s", name, data)
	}
	if name, data := s.next(t); name != eventFrame || !strings.Contains(data, `"sessionId":"s-1"`) {
		t.Fatalf("snapshot frame %s %s", name, data)
	}
	waitFor(t, "the stream's subscription", func() bool {
		tp.hub.mu.Lock()
		defer tp.hub.mu.Unlock()
		return len(tp.hub.subs) == 1
	})
	tp.OnTraffic(wire.TrafficEvent{SessionID: "s-1", Kind: wire.TrafficResponse, Type: wire.TypeCatalog, Outcome: wire.TrafficOK})
	if name, data := s.next(t); name != eventTraffic || !strings.Contains(data, `"type":"tool.catalog"`) {
		t.Fatalf("traffic event %s %s", name, data)
	}
	// A catalog answer may move the session's revision: the list is published again.
	if name, _ := s.next(t); name != eventSessions {
		t.Fatalf("after a catalog: %s", name)
	}
	tp.OnFrame("s-1", wire.ASJPFrame{Width: 2, Height: 2, JPEG: []byte{2}})
	if name, data := s.next(t); name != eventFrame || !strings.Contains(data, `"width":2`) {
		t.Fatalf("frame event %s %s", name, data)
	}
	tp.Close() // ends the stream
	if _, err := s.r.ReadString('\n'); err == nil {
		for {
			if _, err := s.r.ReadString('\n'); err != nil {
				break
			}
		}
	}
	if w := tp.do(t, req{path: "/api/events", cookie: true}); w.Code != http.StatusServiceUnavailable {
		t.Errorf("events after Close: %d", w.Code)
	}
}

func TestHubDropsLaggingSubscribers(t *testing.T) {
	t.Parallel()
	h := newHub()
	slow, fast := h.subscribe(), h.subscribe()
	for i := range subscriberBuffer + 1 {
		h.publish("x", i)
		if i < subscriberBuffer {
			<-fast.ch
		}
	}
	select {
	case <-slow.gone:
	default:
		t.Fatal("a subscriber that fell behind is still subscribed")
	}
	select {
	case <-fast.gone:
		t.Fatal("a subscriber that kept up was dropped")
	default:
	}
	h.close()
	<-fast.gone
	if h.subscribe() != nil {
		t.Error("subscribe after close")
	}
}

// eventsBackend is the fake backend whose session events the test sends.
type eventsBackend struct {
	*fakeBackend
	events chan hostapi.Event
}

func (b *eventsBackend) Events(ctx context.Context, fn func(hostapi.Event) error) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev := <-b.events:
			if err := fn(ev); err != nil {
				return err
			}
		}
	}
}

// The player follows the session events of its backend (the seam, not the host): a
// removed session's traffic and live frame are forgotten, and the list is published again.
func TestBackendEvents(t *testing.T) {
	t.Parallel()
	tp := newTestPlayer(t)
	b := &eventsBackend{fakeBackend: tp.backend, events: make(chan hostapi.Event)}
	p, err := New(b, Options{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	sub := p.hub.subscribe()
	p.OnTraffic(wire.TrafficEvent{SessionID: "s-2", Kind: wire.TrafficRequest, Type: wire.TypeCall, Outcome: wire.TrafficOK})
	p.OnFrame("s-2", wire.ASJPFrame{Width: 1, Height: 1, JPEG: []byte{1}})
	b.events <- hostapi.Event{Kind: hostapi.EventRemoved, SessionID: "s-2"}
	b.events <- hostapi.Event{Kind: hostapi.EventUpdated} // handled once the removal is
	if len(p.trafficOf("s-2")) != 0 || p.frameOf("s-2") != nil {
		t.Error("the removed session's traffic or frame is still kept")
	}
	for msg := range sub.ch {
		if msg.name == eventSessions {
			return
		}
	}
	t.Error("the session list was not published after the events")
}

// TestUIOperation: the screen page's tree comes from the host's UI operation, which reads
// an official SDK's compact v2 tree (typeId, no type) into the one projection: the types
// resolved, the viewport, the state with ancestors; its acts name the node.
func TestUIOperation(t *testing.T) {
	t.Parallel()
	tp := newTestPlayer(t)
	tree, err := os.ReadFile(filepath.Join("..", "wire", "uitree", "testdata", "official", "android-views.json"))
	if err != nil {
		t.Fatal(err)
	}
	tp.backend.answer = &hostapi.Call{Schema: hostapi.SchemaCall, SessionID: "s-1", ToolID: "ui.get_visual_tree", Success: true,
		Result: &wire.Result{ToolID: "ui.get_visual_tree", Success: true, Result: tree}}
	w := tp.do(t, req{method: "POST", path: "/api/sessions/s-1/ui", cookie: true, csrf: tp.csrfToken(),
		body: `{"operation":"snapshot","maxNodes":2000,"maxDepth":64}`})
	op := decode[hostapi.UIOperation](t, w)
	if w.Code != 200 || !op.Succeeded || op.Result.Root == nil || op.Result.Root.Type != "com.android.internal.policy.DecorView" ||
		op.Result.Viewport == nil || op.Result.Viewport.Width != 1080 || op.Result.SnapshotID == "" {
		t.Fatalf("%d %+v", w.Code, op)
	}
	search := op.Result.Root.Children[0].Children[1]
	if search.Type != "android.widget.EditText" || search.Text != "Search notes" || search.Value != "milk" || search.Role != "textbox" {
		t.Errorf("the search field reads %+v", search)
	}
	if len(op.Result.Root.Children) != 1 {
		t.Errorf("the SDK's overlay surface is in the projection: %d children", len(op.Result.Root.Children))
	}
	if w := tp.do(t, req{method: "POST", path: "/api/sessions/s-1/ui", cookie: true, body: `{"operation":"snapshot"}`}); w.Code != http.StatusForbidden {
		t.Errorf("a UI operation without the CSRF header: %d", w.Code)
	}
}
