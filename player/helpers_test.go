package player

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"go.uber.org/goleak"

	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/internal/control"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testToken = "test-token-0123456789"

// fakeBackend answers the calls the player makes with canned data; methods the tests do
// not use panic through the nil embedded interface.
type fakeBackend struct {
	control.Backend
	mu       sync.Mutex
	sessions []control.Session
	tool     wire.ToolEntry
	calls    []control.CallRequest
	answer   *control.Call
	crashes  []host.CrashReport
	notes    []host.Annotation
	// recordsAsked are the timeline's requests (recording_test.go).
	recordsAsked []control.RecordsRequest
}

func (f *fakeBackend) Crashes(_ context.Context, sid string) (*control.Crashes, error) {
	return &control.Crashes{Schema: control.SchemaCrashes, SessionID: sid, Crashes: f.crashes}, nil
}

func (f *fakeBackend) Annotations(_ context.Context, sid string) (*control.Annotations, error) {
	return &control.Annotations{Schema: control.SchemaAnnotations, SessionID: sid, Annotations: f.notes}, nil
}

func (f *fakeBackend) Sessions(context.Context) (*control.Sessions, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &control.Sessions{Schema: control.SchemaSessions, Sessions: append([]control.Session{}, f.sessions...)}, nil
}

func (f *fakeBackend) Tool(_ context.Context, sid, id string) (*control.Tool, error) {
	if sid != "s-1" {
		return nil, &control.APIError{Status: http.StatusNotFound, Code: control.CodeSessionNotFound, Message: "no session " + sid}
	}
	if id != f.tool.ID {
		return nil, &control.APIError{Status: http.StatusNotFound, Code: wire.CodeNotFound, Message: "no tool " + id}
	}
	return &control.Tool{Schema: control.SchemaTool, SessionID: sid, Revision: "rev", Tool: f.tool}, nil
}

func (f *fakeBackend) Call(_ context.Context, sid string, req control.CallRequest, _ func(control.Progress)) (*control.Call, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, req)
	return f.answer, nil
}

// testPlayer is a player over a fake backend and a real (idle) host server, with its
// artifact directory.
type testPlayer struct {
	*Player
	backend *fakeBackend
	dir     string
	hostSrv *host.Server
}

func (tp *testPlayer) srvForTest() *host.Server { return tp.hostSrv }

// tpAnswer is a successful call without artifacts.
var tpAnswer = control.Call{Schema: control.SchemaCall, SessionID: "s-1", ToolID: "x", Success: true,
	Result: &wire.Result{ToolID: "x", Success: true, Result: jsontext.Value(`{}`)}}

func newTestPlayer(t *testing.T) *testPlayer {
	t.Helper()
	srv, err := host.New(host.Options{DiscoveryAddr: "127.0.0.1:0", ListenAddr: "127.0.0.1:0", KeepAlive: transport.KeepAlive{Interval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	dir := t.TempDir()
	fb := &fakeBackend{
		sessions: []control.Session{{ID: "s-1", AppID: "com.example", State: control.StateConnected, MaxToolPolicy: wire.PolicyWrite}},
		tool: wire.ToolEntry{ID: "notes.create", Name: "Create note", Policy: wire.PolicyWrite,
			ArgumentsSchema: jsontext.Value(`{"type":"object","properties":{"title":{"type":"string","minLength":1},"n":{"type":"integer","maximum":3}},"required":["title"]}`)},
	}
	p, err := New(fb, srv, Options{Token: testToken, ArtifactDir: dir, TrafficPerSession: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return &testPlayer{Player: p, backend: fb, dir: dir, hostSrv: srv}
}

// req builds a request to the player as a browser on 127.0.0.1:47231 would send it.
type req struct {
	method, path, body string
	host               string // default 127.0.0.1:47231
	cookie             bool   // send the session cookie
	csrf               string // X-Ansight-CSRF
	origin             string
	fetchSite          string
}

func (tp *testPlayer) do(t *testing.T, r req) *httptest.ResponseRecorder {
	t.Helper()
	if r.method == "" {
		r.method = http.MethodGet
	}
	hr := httptest.NewRequest(r.method, r.path, strings.NewReader(r.body))
	hr.Host = "127.0.0.1:47231"
	if r.host != "" {
		hr.Host = r.host
	}
	if r.cookie {
		hr.AddCookie(&http.Cookie{Name: cookieName(hr.Host), Value: testToken})
	}
	if r.csrf != "" {
		hr.Header.Set(CSRFHeader, r.csrf)
	}
	if r.origin != "" {
		hr.Header.Set("Origin", r.origin)
	}
	if r.fetchSite != "" {
		hr.Header.Set("Sec-Fetch-Site", r.fetchSite)
	}
	w := httptest.NewRecorder()
	tp.ServeHTTP(w, hr)
	return w
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond; only for things that happen on other goroutines.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
