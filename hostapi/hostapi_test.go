package hostapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// fakeBackend answers with canned values and records what it was asked.
type fakeBackend struct {
	Backend // unimplemented methods panic: a test that reaches them is wrong
	calls   []CallRequest
	tools   ToolsRequest
}

func (f *fakeBackend) Status(context.Context) (*Status, error) {
	return &Status{Schema: SchemaStatus, Version: "test", PID: 42}, nil
}

func (f *fakeBackend) Session(_ context.Context, id string) (*Session, error) {
	if id != "app-001" {
		return nil, SessionNotFound(id)
	}
	return &Session{ID: id, AppID: "com.example", State: StateConnected}, nil
}

func (f *fakeBackend) Tools(_ context.Context, id string, req ToolsRequest) (*Tools, error) {
	f.tools = req
	return &Tools{Schema: SchemaTools, SessionID: id, Revision: "r1", Count: 1, TotalCount: 1,
		Tools: []wire.ToolEntry{{ID: "a.read", Name: "A", Policy: wire.PolicyRead}}}, nil
}

func (f *fakeBackend) Call(_ context.Context, id string, req CallRequest, progress func(Progress)) (*Call, error) {
	f.calls = append(f.calls, req)
	if progress != nil {
		progress(Progress{TransferID: "t1", ReceivedBytes: 5, SizeBytes: 10})
		progress(Progress{TransferID: "t1", ReceivedBytes: 10, SizeBytes: 10, Done: true})
	}
	if req.ToolID == "x.denied" {
		return &Call{Schema: SchemaCall, SessionID: id, ToolID: req.ToolID,
			Error: &ToolError{Error: wire.Error{Code: wire.CodePolicyNotGranted, Message: "no"}, Kind: wire.KindDenied, RefusedByHost: true}}, nil
	}
	if req.ToolID == "x.timeout" {
		return nil, Errorf(http.StatusGatewayTimeout, wire.CodeTimeout, "no answer")
	}
	return &Call{Schema: SchemaCall, SessionID: id, ToolID: req.ToolID, Success: true,
		Result: &wire.Result{ToolID: req.ToolID, Success: true, Result: jsontext.Value(`{"ok":true}`)}}, nil
}

// serve runs the handler over a real Unix socket made by Listen.
func serve(t *testing.T, b Backend) *Client { return serveWith(t, b, nil) }

// serveWith is serve with the server's ConnState hook.
func serveWith(t *testing.T, b Backend, connState func(net.Conn, http.ConnState)) *Client {
	t.Helper()
	dir, err := os.MkdirTemp("", "ctl") // short: Unix socket paths are limited to ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "state", SocketName)
	l, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: NewHandler(b), ConnState: connState}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return NewClient(path)
}

func TestListenIsPrivate(t *testing.T) { // not parallel: Listen sets the process umask for a moment
	c := serve(t, &fakeBackend{})
	for path, want := range map[string]os.FileMode{c.socket: 0o600, filepath.Dir(c.socket): 0o700} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != want {
			t.Errorf("%s: mode %04o, want %04o", path, got, want)
		}
	}
	// A second host on the same state directory is refused while the first one lives.
	if _, err := Listen(c.socket); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("second Listen: %v", err)
	}
}

func TestListenReplacesStaleSocket(t *testing.T) { // not parallel: Listen sets the process umask for a moment
	dir, err := os.MkdirTemp("", "ctl")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, SocketName)
	l, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	// A host that died leaves its socket file behind: unlinking is disabled so Close keeps it.
	l.(interface{ SetUnlinkOnClose(bool) }).SetUnlinkOnClose(false)
	l.Close()
	l2, err := Listen(path)
	if err != nil {
		t.Fatalf("stale socket not replaced: %v", err)
	}
	l2.Close()
}

func TestClientRoundTrip(t *testing.T) { // not parallel: Listen sets the process umask for a moment
	fb := &fakeBackend{}
	c := serve(t, fb)
	ctx := t.Context()

	st, err := c.Status(ctx)
	if err != nil || st.PID != 42 || st.Schema != SchemaStatus {
		t.Fatalf("Status = %+v, %v", st, err)
	}
	if _, err := c.Session(ctx, "nope"); wire.CodeOf(err) != wire.CodeSessionNotFound {
		t.Errorf("unknown session: %v", err)
	}
	tools, err := c.Tools(ctx, "app-001", ToolsRequest{Query: "a b", Policy: "read", MaxResults: 3})
	if err != nil || tools.Count != 1 || tools.Tools[0].ID != "a.read" {
		t.Fatalf("Tools = %+v, %v", tools, err)
	}
	if fb.tools.Query != "a b" || fb.tools.MaxResults != 3 {
		t.Errorf("request reached the backend as %+v", fb.tools)
	}

	var progress []Progress
	res, err := c.Call(ctx, "app-001", CallRequest{ToolID: "a.read", Arguments: jsontext.Value(`{"n":1}`)}, func(p Progress) { progress = append(progress, p) })
	if err != nil || !res.Success || string(res.Result.Result) != `{"ok":true}` {
		t.Fatalf("Call = %+v, %v", res, err)
	}
	if len(progress) != 2 || !progress[1].Done {
		t.Errorf("progress = %+v", progress)
	}
	if got := string(fb.calls[0].Arguments); got != `{"n":1}` {
		t.Errorf("arguments reached the backend as %s", got)
	}

	// A tool's refusal is data, not an error.
	res, err = c.Call(ctx, "app-001", CallRequest{ToolID: "x.denied"}, nil)
	if err != nil || res.Error == nil || res.Error.Kind != wire.KindDenied || !res.Error.RefusedByHost {
		t.Fatalf("denied call = %+v, %v", res, err)
	}
	// A host failure is an *APIError, streamed or not.
	for _, p := range []func(Progress){nil, func(Progress) {}} {
		if _, err := c.Call(ctx, "app-001", CallRequest{ToolID: "x.timeout"}, p); wire.CodeOf(err) != wire.CodeTimeout {
			t.Errorf("timeout call: %v", err)
		}
	}
}

func TestHandlerRejectsBadBodies(t *testing.T) { // not parallel: Listen sets the process umask for a moment
	c := serve(t, &fakeBackend{})
	for _, body := range []string{`{"toolId":"a","toolId":"b"}`, `{"ToolId":"a"}`, `[1]`, `{`} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://ansight/v1/sessions/app-001/call", strings.NewReader(body))
		resp, err := c.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("body %s: status %d, want 400", body, resp.StatusCode)
		}
	}
	if err := c.do(t.Context(), target{http.MethodGet, "/v1/nothing"}, nil, nil); wire.CodeOf(err) != wire.CodeResourceNotFound {
		t.Errorf("unknown endpoint: %v", err)
	}
}

func TestNoHost(t *testing.T) {
	t.Parallel()
	c := NewClient(filepath.Join(t.TempDir(), "none.sock"))
	ctx := t.Context()
	if _, err := c.Status(ctx); !errors.Is(err, ErrHostUnavailable) {
		t.Errorf("Status without a host: %v", err)
	}
}

func TestFilterTools(t *testing.T) {
	t.Parallel()
	f := false
	entries := []wire.ToolEntry{
		{ID: "notes.create", Name: "Create note", Description: "Adds a note.", Category: "notes", Policy: wire.PolicyWrite, Keywords: "add new"},
		{ID: "notes.list", Name: "List notes", Description: "Lists notes.", Category: "notes", Policy: wire.PolicyRead},
		{ID: "sync.push", Name: "Push", Description: "Pushes changes.", Category: "sync", Policy: wire.PolicyWrite,
			Runtime: &wire.Runtime{Available: false, Code: "not_signed_in"}, Executable: &f},
		{ID: "app.reset", Name: "Reset", Description: "Resets everything.", Category: "app", Policy: wire.PolicyCritical,
			Denial: &wire.Denial{Code: wire.CodePolicyNotGranted}},
	}
	ids := func(req ToolsRequest) string {
		var out []string
		for _, e := range FilterTools(entries, req) {
			out = append(out, e.ID)
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		req  ToolsRequest
		want string
	}{
		{ToolsRequest{}, "notes.create,notes.list,sync.push,app.reset"},
		{ToolsRequest{Query: "NOTE add"}, "notes.create"},
		{ToolsRequest{Query: "notes", Feature: "list"}, "notes.list"},
		{ToolsRequest{Category: "sync"}, "sync.push"},
		{ToolsRequest{Policy: "WRITE"}, "notes.create,sync.push"},
		{ToolsRequest{Policy: "delete"}, "app.reset"},
		{ToolsRequest{ExecutableOnly: true}, "notes.create,notes.list"},
		{ToolsRequest{ToolIDs: []string{"app.reset", "nope"}}, "app.reset"},
		{ToolsRequest{Query: "zzz"}, ""},
	} {
		t.Run(fmt.Sprintf("%+v", tc.req), func(t *testing.T) {
			t.Parallel()
			if got := ids(tc.req); got != tc.want {
				t.Errorf("%+v: %q, want %q", tc.req, got, tc.want)
			}
		})
	}
}

// The handler serves every route of the table, and what Client sends for a route reaches
// that route: both ends read the one table.
func TestRouteTable(t *testing.T) {
	t.Parallel()
	mux := NewHandler(&fakeBackend{}).(*http.ServeMux)
	seen := map[string]bool{}
	for _, rt := range routes {
		name := rt.method + " " + rt.pattern
		if seen[name] {
			t.Errorf("route %s is in the table twice", name)
		}
		seen[name] = true
		args := make([]string, strings.Count(rt.pattern, "{"))
		for i := range args {
			args[i] = fmt.Sprintf("a/%d b", i) // escaped as one segment
		}
		tg := rt.at(args...)
		req, err := http.NewRequest(tg.method, "http://ansight"+tg.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, pattern := mux.Handler(req); pattern != name {
			t.Errorf("%s %s is served by %q, want %q", tg.method, tg.path, pattern, name)
		}
	}
}

// Events reach a client over the socket as the backend reports them, until the client
// stops following.
func TestEventsOverTheSocket(t *testing.T) { // not parallel: Listen sets the process umask for a moment
	c := serve(t, &eventsBackend{events: []Event{{Kind: EventConnected, SessionID: "app-001"}, {Kind: EventUpdated}}})
	ctx, cancel := context.WithCancel(t.Context()) // however long a busy machine takes
	defer cancel()
	var got []Event
	stop := errors.New("enough")
	err := c.Events(ctx, func(ev Event) error {
		got = append(got, ev)
		if len(got) == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || len(got) != 2 || got[0] != (Event{Kind: EventConnected, SessionID: "app-001"}) || got[1].Kind != EventUpdated {
		t.Errorf("Events = %v, got %+v", err, got)
	}
}

// eventsBackend reports its events, then waits for the subscriber to leave.
type eventsBackend struct {
	Backend
	events []Event
}

func (b *eventsBackend) Events(ctx context.Context, fn func(Event) error) error {
	for _, ev := range b.events {
		if err := fn(ev); err != nil {
			return err
		}
	}
	<-ctx.Done()
	return ctx.Err()
}

// Calls one after another go over one connection: the answer's last line reaches the
// client with the end of its body, so the connection goes back to the pool when the
// client stops at that line (the last line flushed alone, 1–2.5 % of calls dialed anew).
func TestStreamedCallsReuseTheConnection(t *testing.T) { // not parallel: Listen sets the process umask for a moment
	var conns atomic.Int64
	c := serveWith(t, &fakeBackend{}, func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	})
	for i := range 600 {
		req := CallRequest{ToolID: []string{"a.read", "x.denied", "x.timeout"}[i%3]}
		var progress func(Progress)
		if i%2 == 0 {
			progress = func(Progress) {}
		}
		if _, err := c.Call(t.Context(), "app-001", req, progress); err != nil && req.ToolID != "x.timeout" {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("600 calls opened %d connections, want 1", n)
	}
}
