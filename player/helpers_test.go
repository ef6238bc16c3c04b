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

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testToken = "test-token-0123456789"

// fakeBackend answers the calls the player makes with canned data; methods the tests do
// not use panic through the nil embedded interface.
type fakeBackend struct {
	hostapi.Backend
	mu       sync.Mutex
	sessions []hostapi.Session
	tool     wire.ToolEntry
	calls    []hostapi.CallRequest
	answer   *hostapi.Call
	crashes  []hostapi.CrashReport
	notes    []hostapi.Annotation
	// recordsAsked are the timeline's requests (recording_test.go); traffic is what a
	// request for traffic records answers.
	recordsAsked []hostapi.RecordsRequest
	traffic      []hostapi.Record
}

func (f *fakeBackend) Crashes(_ context.Context, sid string) (*hostapi.Crashes, error) {
	return &hostapi.Crashes{Schema: hostapi.SchemaCrashes, SessionID: sid, Crashes: f.crashes}, nil
}

func (f *fakeBackend) Annotations(_ context.Context, sid string) (*hostapi.Annotations, error) {
	return &hostapi.Annotations{Schema: hostapi.SchemaAnnotations, SessionID: sid, Annotations: f.notes}, nil
}

func (f *fakeBackend) Sessions(context.Context) (*hostapi.Sessions, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &hostapi.Sessions{Schema: hostapi.SchemaSessions, Sessions: append([]hostapi.Session{}, f.sessions...)}, nil
}

func (f *fakeBackend) Tool(_ context.Context, sid, id string) (*hostapi.Tool, error) {
	if sid != "s-1" {
		return nil, &hostapi.APIError{Status: http.StatusNotFound, Code: wire.CodeSessionNotFound, Message: "no session " + sid}
	}
	if id != f.tool.ID {
		return nil, &hostapi.APIError{Status: http.StatusNotFound, Code: wire.CodeNotFound, Message: "no tool " + id}
	}
	return &hostapi.Tool{Schema: hostapi.SchemaTool, SessionID: sid, Revision: "rev", Tool: f.tool}, nil
}

func (f *fakeBackend) Call(_ context.Context, sid string, req hostapi.CallRequest, _ func(hostapi.Progress)) (*hostapi.Call, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, req)
	return f.answer, nil
}

// UI runs a UI operation over the fake's calls, as every backend does.
func (f *fakeBackend) UI(ctx context.Context, sid string, req hostapi.UIRequest) (*hostapi.UIOperation, error) {
	return hostapi.RunUI(ctx, f, sid, req)
}

// Events reports no session event: the tests publish what they need.
func (f *fakeBackend) Events(ctx context.Context, _ func(hostapi.Event) error) error {
	<-ctx.Done()
	return ctx.Err()
}

// testPlayer is a player over a fake backend, with its artifact directory.
type testPlayer struct {
	*Player
	backend *fakeBackend
	dir     string
}

// tpAnswer is a successful call without artifacts.
var tpAnswer = hostapi.Call{Schema: hostapi.SchemaCall, SessionID: "s-1", ToolID: "x", Success: true,
	Result: &wire.Result{ToolID: "x", Success: true, Result: jsontext.Value(`{}`)}}

func newTestPlayer(t *testing.T) *testPlayer {
	t.Helper()
	dir := t.TempDir()
	fb := &fakeBackend{
		sessions: []hostapi.Session{{ID: "s-1", AppID: "com.example", State: hostapi.StateConnected, MaxToolPolicy: wire.PolicyWrite}},
		tool: wire.ToolEntry{ID: "notes.create", Name: "Create note", Policy: wire.PolicyWrite,
			ArgumentsSchema: jsontext.Value(`{"type":"object","properties":{"title":{"type":"string","minLength":1},"n":{"type":"integer","maximum":3}},"required":["title"]}`)},
	}
	p, err := New(fb, Options{Token: testToken, ArtifactDir: dir, TrafficPerSession: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return &testPlayer{Player: p, backend: fb, dir: dir}
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
	for !cond() { // however long a busy machine takes: go test's -timeout bounds a hang
		if t.Context().Err() != nil {
			t.Fatalf("the test ended waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// csrfToken is the pages' CSRF token of the current access token.
func (p *Player) csrfToken() string { return p.keys.Load().csrf }
