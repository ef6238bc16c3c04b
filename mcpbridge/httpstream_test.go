package mcpbridge

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawSession is an MCP session over HTTP driven by hand, so that a test can drop a stream,
// read comments and resume with Last-Event-ID as no SDK client lets it.
type rawSession struct {
	t        *testing.T
	endpoint string
	c        *http.Client
	id       string // Mcp-Session-Id
	version  string
}

// openRaw initializes a session at endpoint in protocol version.
func openRaw(t *testing.T, endpoint, version string) *rawSession {
	t.Helper()
	s := &rawSession{t: t, endpoint: endpoint, c: httpClient(t), version: version}
	resp := s.post(t.Context(), fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, version))
	s.id = resp.Header.Get("Mcp-Session-Id")
	ev := readEvents(resp.Body)
	for e := range ev {
		if e.data != "" {
			break
		}
	}
	resp.Body.Close()
	if s.id == "" {
		t.Fatal("no session id")
	}
	s.post(t.Context(), `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	return s
}

// post sends one POST and returns its response once the headers are in.
func (s *rawSession) post(ctx context.Context, body string) *http.Response {
	s.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, strings.NewReader(body))
	s.headers(req)
	resp, err := s.c.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

// resume sends a GET resuming a stream after the event lastID.
func (s *rawSession) resume(ctx context.Context, lastID string) *http.Response {
	s.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.endpoint, nil)
	s.headers(req)
	req.Header.Set("Last-Event-ID", lastID)
	resp, err := s.c.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

func (s *rawSession) headers(req *http.Request) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", s.version)
	}
}

// callBody is a tools/call of an app tool through ansight_call_app_tool, with JSON-RPC id id.
func callBody(id int, toolID string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"toolId":%q}}}`, id, ToolCallAppTool, toolID)
}

// sse is one server-sent event, or a comment.
type sse struct{ comment, name, id, data string }

// readEvents reads the events of a stream until it ends (or its body is closed).
func readEvents(body io.Reader) <-chan sse {
	out := make(chan sse, 64)
	go func() {
		defer close(out)
		r := bufio.NewReader(body)
		var e sse
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSuffix(line, "\n")
			switch {
			case line == "":
				if e != (sse{}) {
					out <- e
				}
				e = sse{}
			case strings.HasPrefix(line, ":"):
				e.comment = strings.TrimSpace(line[1:])
			case strings.HasPrefix(line, "event: "):
				e.name = line[len("event: "):]
			case strings.HasPrefix(line, "id: "):
				e.id = line[len("id: "):]
			case strings.HasPrefix(line, "data: "):
				e.data = line[len("data: "):]
			}
		}
	}()
	return out
}

// holdSession is a session whose notes.list runs until released or given up.
func holdSession(t *testing.T) (*fakeBackend, *fakeCatalog) {
	f := oneSession(t)
	c := f.catalogs["s1"]
	c.hold["notes.list"] = true
	c.release, c.gaveUp = make(chan struct{}), make(chan string, 4)
	return f, c
}

// TestHTTPResponseStartsAtOnce: a long call's response has its headers and a first SSE
// comment as soon as the call starts, and a comment every keep-alive interval while it
// runs; the client's reading is what the test waits on, not a clock.
func TestHTTPResponseStartsAtOnce(t *testing.T) {
	t.Parallel()
	f, c := holdSession(t)
	endpoint := serveHTTP(t, New(f, Options{HTTPNoAuth: true, HTTPKeepAlive: 20 * time.Millisecond}))
	for _, version := range []string{"2025-06-18", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			s := openRaw(t, endpoint, version)
			resp := s.post(t.Context(), callBody(1, "notes.list")) // returns with the headers: the call has not answered
			defer resp.Body.Close()
			if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
				t.Fatalf("%d %s", resp.StatusCode, ct)
			}
			events := readEvents(resp.Body)
			var comments []string
			for e := range events {
				if e.comment != "" {
					comments = append(comments, e.comment)
				}
				if len(comments) == 3 {
					break
				}
			}
			if comments[0] != "ok" || comments[1] != "keep-alive" || comments[2] != "keep-alive" {
				t.Fatalf("comments %q", comments)
			}
			c.release <- struct{}{} // not closed: the next subtest holds again
			for e := range events {
				if strings.Contains(e.data, `"id":1`) {
					return
				}
			}
			t.Fatal("no answer after the keep-alives")
		})
	}
}

// TestHTTPDroppedStreamCancelsTheCall: a client that drops its request's stream and does
// not resume it has given up the call: the host stops waiting for it.
func TestHTTPDroppedStreamCancelsTheCall(t *testing.T) {
	t.Parallel()
	f, c := holdSession(t)
	endpoint := serveHTTP(t, New(f, Options{HTTPNoAuth: true, HTTPResumeWindow: -1}))
	s := openRaw(t, endpoint, "2025-06-18")
	ctx, drop := context.WithCancel(t.Context())
	resp := s.post(ctx, callBody(1, "notes.list"))
	<-readEvents(resp.Body) // the first comment: the call runs
	drop()
	resp.Body.Close()
	if got := <-c.gaveUp; got != "notes.list" {
		t.Fatalf("gave up %q", got)
	}
}

// TestHTTPResumption: a client that drops a stream and resumes it with Last-Event-ID within
// the window keeps its call, and gets its answer on the resumed stream.
//
// The client resumes as soon as it closed its side, before the server may have noticed: the
// SDK, which holds a stream for one response at a time, would refuse the resumption with
// 409 while its handler of the POST still ran (CI saw it on a busy machine); the layer ends
// that request first. Nothing here waits on a clock: a failure fails at once, and the held
// call is released when the test ends, so that the server's shutdown never waits for it.
func TestHTTPResumption(t *testing.T) {
	t.Parallel()
	f, c := holdSession(t)
	// The window is long: the resumption below must never race it on a busy machine.
	endpoint := serveHTTP(t, New(f, Options{HTTPNoAuth: true, HTTPResumeWindow: 10 * time.Minute}))
	var release sync.Once
	t.Cleanup(func() { release.Do(func() { close(c.release) }) }) // before serveHTTP's cleanup
	s := openRaw(t, endpoint, "2025-11-25")                       // primes its streams with an event id
	ctx, drop := context.WithCancel(t.Context())
	resp := s.post(ctx, callBody(7, "notes.list"))
	var prime string
	for e := range readEvents(resp.Body) {
		if e.name == "prime" {
			prime = e.id
			break
		}
	}
	drop()
	resp.Body.Close()
	if prime == "" {
		t.Fatal("no priming event")
	}
	again := s.resume(t.Context(), prime)
	defer again.Body.Close()
	if again.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(again.Body)
		t.Fatalf("resume: %d %s", again.StatusCode, b)
	}
	events := readEvents(again.Body)
	release.Do(func() { close(c.release) })
	for e := range events {
		if strings.Contains(e.data, `"id":7`) && strings.Contains(e.data, `"result"`) {
			select {
			case id := <-c.gaveUp:
				t.Fatalf("the call was given up (%s) though resumed", id)
			default:
			}
			return
		}
	}
	t.Fatal("the resumed stream ended without the answer")
}

// TestHTTPNoAnswerAfterCancel: after notifications/cancelled the request's stream carries
// no answer (the client forgot the id), and it is not replayed.
func TestHTTPNoAnswerAfterCancel(t *testing.T) {
	t.Parallel()
	f, c := holdSession(t)
	endpoint := serveHTTP(t, New(f, Options{HTTPNoAuth: true}))
	s := openRaw(t, endpoint, "2025-11-25")
	resp := s.post(t.Context(), callBody(9, "notes.list"))
	defer resp.Body.Close()
	events := readEvents(resp.Body)
	var prime string
	for e := range events {
		if e.name == "prime" {
			prime = e.id
		}
		if e.comment == "ok" {
			break // the call runs
		}
	}
	s.post(t.Context(), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"user"}}`).Body.Close()
	if got := <-c.gaveUp; got != "notes.list" {
		t.Fatalf("gave up %q", got)
	}
	for e := range events { // to the end of the stream
		if strings.Contains(e.data, `"id":9`) {
			t.Fatalf("an answer after the cancellation: %s", e.data)
		}
	}
	replay := s.resume(t.Context(), prime)
	replay.Body.Close()
	if replay.StatusCode == http.StatusOK {
		t.Fatal("a cancelled call's stream was replayed")
	}
}

// TestHTTPOwnOrigin: the MCP conformance suite's DNS-rebinding scenario, and pages: under
// --no-auth, a request whose Origin is the server's own (http://127.0.0.1:PORT, or
// localhost at that port) is accepted; a foreign Host, another port's origin, a rebound
// name and a null origin are still refused.
func TestHTTPOwnOrigin(t *testing.T) {
	t.Parallel()
	endpoint := serveHTTP(t, New(oneSession(t), Options{HTTPNoAuth: true}))
	u, _ := url.Parse(endpoint)
	port := u.Port()
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"conformance-dns-rebinding-test","version":"1.0.0"}}}`
	for _, tc := range []struct {
		host, origin string
		want         int
	}{
		{"127.0.0.1:" + port, "", http.StatusOK},
		{"evil.example.com", "", http.StatusForbidden},
		{"127.0.0.1:" + port, "http://127.0.0.1:" + port, http.StatusOK},
		{"localhost:" + port, "http://localhost:" + port, http.StatusOK},
		{"127.0.0.1:" + port, "http://[::1]:" + port, http.StatusOK},
		{"127.0.0.1:" + port, "http://127.0.0.1:1", http.StatusForbidden},
		{"127.0.0.1:" + port, "https://127.0.0.1:" + port, http.StatusForbidden},
		{"127.0.0.1:" + port, "http://evil.example.com:" + port, http.StatusForbidden},
		{"127.0.0.1:" + port, "null", http.StatusForbidden},
		{"evil.example.com:" + port, "http://evil.example.com:" + port, http.StatusForbidden},
	} {
		t.Run(tc.host+" "+tc.origin, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(initialize))
			req.Host = tc.host
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			resp, err := httpClient(t).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("%d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}

// TestHTTPStreamHeaderNotTrusted: a client cannot pass itself off as another POST's stream
// by sending the layer's own header.
func TestHTTPStreamHeaderNotTrusted(t *testing.T) {
	t.Parallel()
	f, c := holdSession(t)
	endpoint := serveHTTP(t, New(f, Options{HTTPNoAuth: true, HTTPResumeWindow: -1}))
	s := openRaw(t, endpoint, "2025-06-18")
	resp := s.post(t.Context(), callBody(1, "notes.list"))
	defer resp.Body.Close()
	events := readEvents(resp.Body)
	<-events
	// Another request claiming the stream's tag, dropped at once: it must not cancel the
	// first call.
	ctx, drop := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	s.headers(req)
	req.Header.Set(streamHeader, "forged")
	if r, err := s.c.Do(req); err == nil {
		r.Body.Close()
	}
	drop()
	close(c.release)
	for e := range events {
		if strings.Contains(e.data, `"id":1`) {
			return
		}
	}
	t.Fatal("the first call was not answered")
}
