package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/pairing"
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
// app tools in sync meanwhile. Every request must carry Options.HTTPToken as a bearer
// token (unless Options.HTTPNoAuth); requests whose Host is not a loopback name, or that
// come from a web page whose origin is not in Options.AllowedOrigins, are refused (DNS
// rebinding, drive-by pages, other local users' processes). When Serve returns, the MCP
// sessions it served are closed.
func (br *Bridge) Serve(ctx context.Context, l net.Listener) error {
	guard, err := br.httpGuard()
	if err != nil {
		return err
	}
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
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return br.server },
		&mcp.StreamableHTTPOptions{SessionTimeout: 30 * time.Minute, PropagateRequestCancellation: true, EventStore: br.http.store})
	br.http.next = streamable
	mux := http.NewServeMux()
	mux.Handle(HTTPPath, br.http)
	guard.next = mux
	if a, ok := l.Addr().(*net.TCPAddr); ok {
		guard.port = a.Port
	}
	srv := &http.Server{Handler: guard, ReadHeaderTimeout: 10 * time.Second}
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

// httpGuard checks every request before the MCP handler sees it.
type httpGuard struct {
	next    http.Handler
	token   string          // "" when Options.HTTPNoAuth
	origins map[string]bool // allowed browser origins, normalized
	port    int             // the listener's: http://127.0.0.1:port is the server's own origin
}

// httpGuard builds the guard from the options, refusing a configuration without a token
// (unless HTTPNoAuth) or with an origin that is not one.
func (br *Bridge) httpGuard() (*httpGuard, error) {
	g := &httpGuard{token: br.opts.HTTPToken, origins: map[string]bool{}}
	if br.opts.HTTPNoAuth {
		g.token = ""
	} else if g.token == "" {
		return nil, errors.New("mcpbridge: serving HTTP needs a bearer token (Options.HTTPToken), or Options.HTTPNoAuth")
	}
	for _, o := range br.opts.AllowedOrigins {
		n, err := NormalizeOrigin(o)
		if err != nil {
			return nil, err
		}
		g.origins[n] = true
	}
	return g, nil
}

// NormalizeOrigin checks that o is a web origin (scheme://host[:port], http or https, no
// path) and returns it as browsers send it: scheme and host in lower case.
func NormalizeOrigin(o string) (string, error) {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", fmt.Errorf("mcpbridge: %q is not a web origin (like http://localhost:6274)", o)
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host), nil
}

// corsHeaders are the request headers a browser client of MCP sends.
const corsHeaders = "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID"

func (g *httpGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A DNS rebinding page reaches 127.0.0.1 under its own name.
	if !loopbackHost(r.Host) {
		http.Error(w, "forbidden: Host must be a loopback name (localhost, 127.0.0.1, [::1])", http.StatusForbidden)
		return
	}
	// Clients that are not browsers send no Origin. A page is answered only when its origin
	// is allowed, and then with the CORS headers it needs to read the answer.
	if origin := r.Header.Get("Origin"); origin != "" {
		if !g.allowed(origin) {
			http.Error(w, "forbidden: requests from web pages are refused unless their origin is allowed ('ansight mcp --allow-origin ORIGIN')", http.StatusForbidden)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate")
		if r.Method == http.MethodOptions { // a preflight never carries credentials
			h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
			h.Set("Access-Control-Allow-Headers", corsHeaders)
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	if g.token != "" {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !pairing.EqualTokens(strings.TrimSpace(got), g.token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ansight-mcp"`)
			http.Error(w, "unauthorized: send the header 'Authorization: Bearer TOKEN' with the token 'ansight mcp --http' printed", http.StatusUnauthorized)
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

// allowed reports whether a request's Origin header is in the allow-list, or is the server's
// own origin: http on a loopback name at the listener's port (the MCP conformance suite's
// DNS-rebinding scenario sends it; no other site can be served from that origin, and a
// rebinding page's origin is its own name, refused here and by the Host check).
func (g *httpGuard) allowed(origin string) bool {
	n, err := NormalizeOrigin(origin)
	if err != nil {
		return false
	}
	if g.origins[n] {
		return true
	}
	hostport, ok := strings.CutPrefix(n, "http://")
	if !ok || g.port == 0 {
		return false
	}
	_, port, err := net.SplitHostPort(hostport)
	return err == nil && port == strconv.Itoa(g.port) && loopbackHost(hostport)
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
