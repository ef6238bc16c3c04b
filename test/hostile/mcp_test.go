package hostile

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/ansight-go/ansight/host/control"
	"github.com/ansight-go/ansight/mcpbridge"
	"github.com/ansight-go/ansight/pairing"
)

// TestHostileToMCPBridge: hostile local web pages and processes against 'ansight mcp
// --http' over a real host. The bridge hands out what the host's sessions can do, so
// only a client holding the run's token, and not a web page, may use it: not a page from
// another localhost port (a dev server the user runs, or one an attacker got the user to
// open), not a page that rebinds its name to 127.0.0.1, not a process that guesses.
func TestHostileToMCPBridge(t *testing.T) {
	h := newTestHost(t, nil)
	token := pairing.NewToken(pairing.AccessTokenBytes)
	br := mcpbridge.New(control.New(h.Server, control.Options{}), mcpbridge.Options{HTTPToken: token})
	l, err := mcpbridge.ListenLoopback("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- br.Serve(ctx, l) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()
	endpoint := "http://" + l.Addr().String() + mcpbridge.HTTPPath
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}`
	post := func(t *testing.T, mutate func(*http.Request)) int {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		mutate(req)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		name   string
		mutate func(*http.Request)
		want   int
	}{
		// Issue 19: a page from any localhost port used to pass the Origin check.
		{"page from another localhost port, with the token", func(r *http.Request) { r.Header.Set("Origin", "http://localhost:3000") }, http.StatusForbidden},
		{"page from a loopback address", func(r *http.Request) { r.Header.Set("Origin", "http://127.0.0.1:8080") }, http.StatusForbidden},
		{"page from an IPv6 loopback origin", func(r *http.Request) { r.Header.Set("Origin", "http://[::1]:5173") }, http.StatusForbidden},
		{"preflight from another localhost port", func(r *http.Request) {
			r.Method = http.MethodOptions
			r.Header.Del("Authorization")
			r.Header.Set("Origin", "http://localhost:3000")
			r.Header.Set("Access-Control-Request-Method", "POST")
		}, http.StatusForbidden},
		// Regression guards: these passed under the old rule too (it refused origins that
		// are not http(s) loopback and foreign Hosts, and the token check was in place);
		// kept because the allow-list replaced that code, and each must stay refused.
		{"sandboxed page (null origin) (regression guard)", func(r *http.Request) { r.Header.Set("Origin", "null") }, http.StatusForbidden},
		{"DNS rebinding (foreign Host) (regression guard)", func(r *http.Request) { r.Host = "rebind.attacker.example" }, http.StatusForbidden},
		{"process without the token (regression guard)", func(r *http.Request) { r.Header.Del("Authorization") }, http.StatusUnauthorized},
		{"token of the right length, wrong (regression guard)", func(r *http.Request) {
			r.Header.Set("Authorization", "Bearer "+pairing.NewToken(pairing.AccessTokenBytes))
		}, http.StatusUnauthorized},
		{"token in the query string (regression guard)", func(r *http.Request) {
			r.Header.Del("Authorization")
			r.URL.RawQuery = "token=" + token
		}, http.StatusUnauthorized},
		{"token as Basic credentials (regression guard)", func(r *http.Request) { r.SetBasicAuth("ansight", token) }, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := post(t, tc.mutate); got != tc.want {
				t.Fatalf("status %d, want %d", got, tc.want)
			}
			// The bridge stays usable for its real client.
			if got := post(t, func(*http.Request) {}); got != http.StatusOK {
				t.Fatalf("the client with the token then got %d", got)
			}
		})
	}
}
