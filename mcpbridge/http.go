package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPPath is where Serve answers MCP requests.
const HTTPPath = "/mcp"

// ListenLoopback listens on addr, which must be a loopback address ("127.0.0.1:7400",
// "[::1]:0", "localhost:7400"; a missing host means 127.0.0.1). The bridge hands out
// whatever the host's sessions can do, so it never listens where another machine could
// reach it.
func ListenLoopback(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("mcpbridge: listen address %q: %w", addr, err)
	}
	switch {
	case host == "" || strings.EqualFold(host, "localhost"):
		host = "127.0.0.1"
	default:
		ip := net.ParseIP(host)
		if ip == nil || !ip.IsLoopback() {
			return nil, fmt.Errorf("mcpbridge: refusing to listen on %q: the MCP bridge listens on loopback only (127.0.0.1, ::1, localhost)", addr)
		}
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("mcpbridge: %w", err)
	}
	return l, nil
}

// Serve serves MCP over streamable HTTP at HTTPPath on l until ctx ends, keeping exposed
// app tools in sync meanwhile. Requests whose Host is not a loopback name, or that come
// from a web page of another origin, are refused (DNS rebinding, drive-by pages). When
// Serve returns, the MCP sessions it served are closed.
func (br *Bridge) Serve(ctx context.Context, l net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	wait := br.startWatch(ctx)
	defer func() { cancel(); wait() }()
	before := map[*mcp.ServerSession]bool{}
	for ss := range br.server.Sessions() {
		before[ss] = true
	}
	// HTTP sessions outlive their requests (until a DELETE or the idle timeout): close them
	// with the server, or their goroutines would outlive Serve.
	defer func() {
		for ss := range br.server.Sessions() {
			if !before[ss] {
				ss.Close()
			}
		}
	}()
	srv := &http.Server{Handler: br.httpHandler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Event streams stay open until their clients go; give requests in flight a moment.
	sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer scancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// httpHandler is the MCP endpoint behind the loopback guard.
func (br *Bridge) httpHandler() http.Handler {
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return br.server },
		&mcp.StreamableHTTPOptions{SessionTimeout: 30 * time.Minute})
	mux := http.NewServeMux()
	mux.Handle(HTTPPath, streamable)
	return guardLoopback(mux)
}

// guardLoopback refuses requests addressed to a name that is not loopback (a DNS rebinding
// page reaches 127.0.0.1 under its own name) and requests from browser pages whose origin
// is not loopback. Clients that are not browsers send no Origin and pass.
func guardLoopback(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			http.Error(w, "forbidden: Host must be a loopback name (localhost, 127.0.0.1, [::1])", http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !loopbackOrigin(origin) {
			http.Error(w, "forbidden: cross-origin requests are refused", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a Host header names this machine's loopback interface.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	} else if strings.HasPrefix(hostport, "[") && strings.HasSuffix(hostport, "]") {
		host = hostport[1 : len(hostport)-1]
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackOrigin reports whether an Origin header is a loopback web origin.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	return loopbackHost(u.Host)
}
