package telemetry

import (
	"context"
	"errors"
	"image"
	"image/color"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ansight-go/ansight/app/ui"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/session"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeLink records what is sent; Control answers success unless refuse is set.
type fakeLink struct {
	mu       sync.Mutex
	texts    []string
	frames   []wire.ASJPFrame
	controls []string
	refuse   bool
	got      chan struct{}
}

func newLink() *fakeLink { return &fakeLink{got: make(chan struct{}, 1000)} }

func (l *fakeLink) Send(ctx context.Context, typ transport.MessageType, data []byte) error {
	l.mu.Lock()
	if typ == transport.MessageBinary {
		f, err := wire.ParseASJP(data)
		if err != nil {
			l.mu.Unlock()
			return err
		}
		f.JPEG = append([]byte(nil), f.JPEG...)
		l.frames = append(l.frames, f)
	} else {
		l.texts = append(l.texts, string(data))
	}
	l.mu.Unlock()
	l.got <- struct{}{}
	return nil
}

func (l *fakeLink) Control(ctx context.Context, action string, payload any) (bool, string, error) {
	l.mu.Lock()
	p, _ := payload.(map[string]string)
	l.controls = append(l.controls, action+" "+p["data"])
	refuse := l.refuse
	l.mu.Unlock()
	l.got <- struct{}{}
	if refuse {
		return false, "no", nil
	}
	return true, "Client log received.", nil
}

// await waits until cond holds over what the link received.
func (l *fakeLink) await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := t.Context().Done() // however long a busy machine takes
	for {
		l.mu.Lock()
		ok := cond()
		l.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-l.got:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestLogsForwardedAsClientLog(t *testing.T) {
	t.Parallel()
	tel := New(Options{MetricsInterval: -1})
	log := slog.New(tel.Handler(nil, &slog.HandlerOptions{Level: slog.LevelDebug}))
	log.Info("before attach", "k", 1) // queued until a session attaches
	link := newLink()
	detach := tel.Attach(link, session.JpegCapturePolicy{})
	defer detach()
	log.With("req", "r1").WithGroup("db").Warn("slow query", "ms", 250)
	link.await(t, "two log lines", func() bool { return len(link.controls) == 2 })
	if !strings.Contains(link.controls[0], `level=INFO msg="before attach" k=1`) ||
		!strings.HasPrefix(link.controls[1], "client.log time=") || !strings.Contains(link.controls[1], `level=WARN msg="slow query" req=r1 db.ms=250`) {
		t.Errorf("client.log lines = %q", link.controls)
	}
	if tail := tel.LogTail(1); len(tail) != 1 || !strings.Contains(tail[0], "slow query") {
		t.Errorf("tail = %q", tail)
	}
	if s := tel.Stats(); s.LogsSent != 2 || s.LogsDropped != 0 {
		t.Errorf("stats = %+v", s)
	}
}

func TestLogQueueBoundedWithoutSession(t *testing.T) {
	t.Parallel()
	tel := New(Options{MaxPendingLogs: 3, MetricsInterval: -1})
	log := slog.New(tel.Handler(nil, nil))
	for range 10 {
		log.Info("x") // never blocks
	}
	if s := tel.Stats(); s.LogsDropped != 7 {
		t.Errorf("dropped = %d, want 7", s.LogsDropped)
	}
}

func TestRoundTripperReportsRedactedMetadata(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Set-Cookie", "sid=secret-cookie")
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	tel := New(Options{MetricsInterval: -1})
	client := &http.Client{Transport: tel.RoundTripper(nil)}
	req, _ := http.NewRequest("POST", srv.URL+"/orders?token=t0k3n&page=2", strings.NewReader(`{"password":"hunter2"}`))
	req.Header.Set("Authorization", "Bearer s3cr3t")
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := client.Get("http://127.0.0.1:1/unreachable?key=qwzx-key"); err == nil {
		t.Fatal("reached port 1")
	}
	link := newLink()
	detach := tel.Attach(link, session.JpegCapturePolicy{})
	defer detach()
	link.await(t, "two request records", func() bool { return len(link.texts) == 2 })
	ok, failed := link.texts[0], link.texts[1]
	for _, secret := range []string{"t0k3n", "s3cr3t", "secret-cookie", "hunter2", "qwzx-key"} {
		if strings.Contains(ok+failed, secret) {
			t.Errorf("record holds %q:\n%s\n%s", secret, ok, failed)
		}
	}
	for _, want := range []string{`"type":"CLIENT_NETWORK_REQUEST"`, `"schema":"ansight.network-request.v1"`, `"method":"POST"`,
		`token=%3Credacted%3E&page=2`, `{"name":"Accept","value":"application/json"}`, `{"name":"Authorization","value":"<redacted>"}`,
		`"requestBodySizeBytes":22`, `"statusCode":200`, `"reasonPhrase":"OK"`, `"protocol":"1.1"`, `"responseBodySizeBytes":11`} {
		if !strings.Contains(ok, want) {
			t.Errorf("record lacks %s:\n%s", want, ok)
		}
	}
	if !strings.Contains(failed, `"errorType":`) || strings.Contains(failed, `"statusCode"`) {
		t.Errorf("failed request record = %s", failed)
	}
}

// closeCounter is a transport that counts CloseIdleConnections.
type closeCounter struct {
	http.RoundTripper
	closed int
}

func (c *closeCounter) CloseIdleConnections() { c.closed++ }

// TestRoundTripperClosesIdleConnections: an http.Client over the wrapper still closes its
// base transport's idle connections (a client that stops leaves none behind).
func TestRoundTripperClosesIdleConnections(t *testing.T) {
	t.Parallel()
	base := &closeCounter{RoundTripper: http.DefaultTransport}
	client := &http.Client{Transport: New(Options{MetricsInterval: -1}).RoundTripper(base)}
	client.CloseIdleConnections()
	if base.closed != 1 {
		t.Errorf("CloseIdleConnections reached the base %d times, want 1", base.closed)
	}
}

func TestRuntimeMetrics(t *testing.T) {
	t.Parallel()
	tel := New(Options{MetricsInterval: 10 * time.Millisecond})
	link := newLink()
	detach := tel.Attach(link, session.JpegCapturePolicy{})
	link.await(t, "channels and two samples", func() bool { return len(link.texts) >= 3 })
	detach()
	if !strings.Contains(link.texts[0], `"type":"CLIENT_METRIC_CHANNELS"`) || !strings.Contains(link.texts[0], `{"id":10,"name":"Goroutines"`) {
		t.Errorf("channels = %s", link.texts[0])
	}
	if m := link.texts[1]; !strings.Contains(m, `"type":"CLIENT_METRICS"`) || !strings.Contains(m, `{"channel":0,"value":`) ||
		!strings.Contains(m, `{"channel":11,"value":`) {
		t.Errorf("samples = %s", m)
	}
}

// solidScreen renders a 1000×500 image.
type solidScreen struct{ fail bool }

func (s solidScreen) Capture(context.Context) (*ui.Node, error) { return &ui.Node{ID: "root"}, nil }
func (s solidScreen) Perform(context.Context, string, ui.Action) (map[string]any, error) {
	return nil, nil
}
func (s solidScreen) Render(context.Context) (image.Image, error) {
	if s.fail {
		return nil, errors.New("no screen")
	}
	img := image.NewRGBA(image.Rect(0, 0, 1000, 500))
	for i := range img.Pix {
		img.Pix[i] = 200
	}
	img.Set(1, 1, color.Black)
	return img, nil
}

func TestScreenStreamFollowsThePolicy(t *testing.T) {
	t.Parallel()
	tel := New(Options{MetricsInterval: -1, Frames: ui.FrameSource(solidScreen{})})
	link := newLink()
	detach := tel.Attach(link, session.JpegCapturePolicy{Mode: "app", IntervalMilliseconds: 50, Quality: 40, MaxWidth: 200})
	link.await(t, "two frames", func() bool { return len(link.frames) >= 2 })
	detach()
	f := link.frames[0]
	if f.Width != 200 || f.Height != 100 || f.Quality != 40 || len(f.JPEG) == 0 || f.JPEG[0] != 0xff {
		t.Errorf("frame = %dx%d q%d, %d bytes", f.Width, f.Height, f.Quality, len(f.JPEG))
	}
	// Host capture: the app streams nothing.
	link = newLink()
	detach = tel.Attach(link, session.JpegCapturePolicy{Mode: "host", IntervalMilliseconds: 50})
	time.Sleep(200 * time.Millisecond) // a window for a wrong frame to show up; none must
	detach()
	if len(link.frames) != 0 {
		t.Errorf("%d frames in host mode", len(link.frames))
	}
}
