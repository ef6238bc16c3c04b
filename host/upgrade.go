package host

import (
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/transport"
)

// serveUpgrade authenticates and upgrades a WebSocket request, then runs the connection's
// reader on this goroutine until the connection ends. Checks, in order:
// path (404), Origin (403), Host on a loopback listener (403), a real upgrade request
// (400, 405 or 426), token (401), capacity (503).
func (s *Server) serveUpgrade(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != pairing.WebSocketPath {
		refuse(w, http.StatusNotFound)
		return
	}
	// Apps never send Origin; browsers always do. Refusing it closes cross-site WebSocket
	// hijacking from any web page the developer visits.
	if _, ok := r.Header["Origin"]; ok {
		s.log.Warn("host: refused upgrade with an Origin header", "from", r.RemoteAddr)
		refuse(w, http.StatusForbidden)
		return
	}
	if !s.opts.LAN && !loopbackHost(r.Host) {
		s.log.Warn("host: refused upgrade for a foreign Host", "from", r.RemoteAddr)
		refuse(w, http.StatusForbidden)
		return
	}
	// Only a request Accept will upgrade may use a token up: a plain POST or GET carrying
	// one is refused before the token is looked at.
	if status, err := transport.CheckUpgrade(r); err != nil {
		s.log.Info("host: refused a request that is not an upgrade", "from", r.RemoteAddr, "err", err)
		refuse(w, status)
		return
	}
	now := s.now()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		refuse(w, http.StatusServiceUnavailable)
		return
	}
	t := s.redeemLocked(requestToken(r), now)
	if t == nil {
		s.mu.Unlock()
		s.log.Info("host: refused upgrade without a valid token", "from", r.RemoteAddr)
		refuse(w, http.StatusUnauthorized)
		return
	}
	resumed := s.resumableLocked(t)
	adds := resumed == nil || resumed.current() == nil // one more connected session
	var displaced *Session
	if adds {
		var ok bool
		if displaced, ok = s.admitLocked(t); !ok {
			s.mu.Unlock()
			s.log.Warn("host: refused upgrade: the session budget is spent", "app", t.appID)
			refuse(w, http.StatusServiceUnavailable)
			return
		}
		// The upgrade holds its place until the session is attached, so that concurrent
		// upgrades cannot all pass the check above.
		s.upgrading[t] = true
	}
	s.wg.Add(1) // under mu and before Close's Wait: Close sets closed under mu
	s.mu.Unlock()
	defer s.wg.Done()
	if displaced != nil {
		s.log.Warn("host: sessions full: ending the oldest session of the app holding the most", "session", displaced.id, "for", t.appID)
		displaced.disconnect(transport.StatusNormalClosure, "The host's sessions are full and this app holds more than its share.")
	}
	release := func() {
		if adds {
			adds = false
			s.mu.Lock()
			delete(s.upgrading, t)
			s.mu.Unlock()
		}
	}
	defer release() // a failed upgrade gives its place back

	conn, err := transport.Accept(w, r, transport.AcceptOptions{ReadLimit: s.opts.MaxMessageBytes, KeepAlive: s.opts.KeepAlive})
	if err != nil {
		s.log.Info("host: upgrade failed", "from", r.RemoteAddr, "err", err)
		return
	}
	if s.opts.WrapConn != nil {
		conn = s.opts.WrapConn(conn)
	}
	remote, _ := netip.ParseAddrPort(r.RemoteAddr)
	sess, c := s.attach(t, conn, remote.Addr())
	release() // attached, it counts as connected (briefly twice: never too few)
	if sess == nil {
		return
	}
	s.serveConn(sess, c)
}

// requestToken takes the token from "Authorization: Bearer" (what our SDK sends, kept out
// of URLs and logs) or else from the query parameter token (the official SDKs).
func requestToken(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(tok)
		}
		return ""
	}
	return r.URL.Query().Get("token")
}

// loopbackHost reports whether a Host header names this machine: localhost or a loopback
// address, with or without a port. Anything else on a loopback listener is a browser
// following a rebound DNS name.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && isLoopback(a)
}

func refuse(w http.ResponseWriter, code int) {
	w.Header().Set("Connection", "close")
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(code)
}
