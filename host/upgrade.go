package host

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/transport"
)

// serveUpgrade authenticates and upgrades a WebSocket request, then starts the connection's
// reader on a goroutine of its own (readSession). Checks, in order:
// path (404), Origin (403), Host on a loopback listener (403, see localHost), a real
// upgrade request (400, 405 or 426), token (401), capacity (503).
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
	remote, _ := netip.ParseAddrPort(r.RemoteAddr)
	if !s.opts.LAN && !localHost(r.Host, remote.Addr()) {
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
	var reason string
	if adds {
		var ok bool
		if displaced, reason, ok = s.admitLocked(t); !ok {
			s.mu.Unlock()
			s.log.Warn("host: refused upgrade: the session budget is spent", "app", t.appID)
			refuse(w, http.StatusServiceUnavailable)
			return
		}
		// The upgrade holds its place until the session is attached, so that concurrent
		// upgrades cannot all pass the check above.
		s.upgrading[t] = true
		s.occupied.add(t.grantID, 1)
	}
	s.wg.Add(1) // under mu and before Close's Wait: Close sets closed under mu
	s.mu.Unlock()
	defer s.wg.Done()
	if displaced != nil {
		s.displace(displaced, t.appID, reason)
	}
	release := func() {
		if adds {
			adds = false
			s.mu.Lock()
			s.endUpgradeLocked(t)
			s.mu.Unlock()
		}
	}
	defer release() // a failed upgrade gives its place back

	// The keep-alive never drops a session that waits for the app (see transport.KeepAlive):
	// the official .NET SDK runs each tool inside its receive loop and answers no ping
	// until the tool is done.
	var client atomic.Pointer[tools.Client]
	ka := s.opts.KeepAlive
	ka.Busy = func() bool { c := client.Load(); return c != nil && c.Busy() }
	conn, err := transport.Accept(w, r, transport.AcceptOptions{ReadLimit: s.opts.MaxMessageBytes, KeepAlive: ka})
	if err != nil {
		s.log.Info("host: upgrade failed", "from", r.RemoteAddr, "err", err)
		return
	}
	if s.opts.WrapConn != nil {
		conn = s.opts.WrapConn(conn)
	}
	sess, c := s.attach(t, conn, remote.Addr()) // which ends the upgrade's hold when it attaches
	release()
	if sess == nil {
		return
	}
	client.Store(c.client)
	// The reader runs on a goroutine of its own and this handler returns: net/http's
	// goroutine reached its deepest frames in the upgrade, and a session reader parked on
	// top of them kept that stack (16 KiB, of which more than a quarter was in use, so the
	// collector never halved it) and the server's per-request state for the session's
	// life. A new goroutine starts at the runtime's usual stack size and holds only the
	// reader: an idle session's host stacks 20.1 -> 12.2 KiB, heap 19.5 -> 16.0 KiB
	// (ansight bench --load --sessions 2000 --duration 5s).
	s.wg.Add(1) // the upgrade's own count is still held: Close cannot have finished waiting
	go s.readSession(sess, c)
}

// readSession runs a session's reader until its connection ends. net/http no longer
// recovers a panic here (the handler has returned), so it does: a bug reading one app's
// messages ends that connection, logged with its stack, not the host.
func (s *Server) readSession(sess *Session, c *connection) {
	defer s.wg.Done()
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("host: session reader panicked; its connection is closed", "session", sess.id, "panic", v, "stack", string(debug.Stack()))
			c.client.Close(fmt.Errorf("host: session reader panicked: %v", v))
			c.conn.Close(transport.StatusInternalError, "internal error")
			s.detach(sess, c)
		}
	}()
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

// localHost reports whether a loopback listener serves an upgrade whose Host header is host
// and whose TCP peer is peer: Host must name this machine — localhost or a loopback address
// — or, from a loopback peer, be an emulator's alias for it. Anything else is a browser
// following a rebound DNS name (which also sends Origin, refused before this).
func localHost(host string, peer netip.Addr) bool {
	return loopbackHost(host) || (isLoopback(peer) && emulatorHost(host))
}

// loopbackHost reports whether a Host header names this machine: localhost or a loopback
// address, with or without a port.
func loopbackHost(host string) bool {
	host = hostName(host)
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && isLoopback(a)
}

// emulatorAliases are the addresses under which emulators reach the machine they run on:
// the Android emulator's 10.0.2.2 and Genymotion's (VirtualBox NAT) 10.0.3.2. The official
// SDKs dial ws://10.0.2.2:<port>/ws there, and the emulator's NAT delivers the connection
// to 127.0.0.1 with that Host header unchanged.
var emulatorAliases = [...]netip.Addr{netip.AddrFrom4([4]byte{10, 0, 2, 2}), netip.AddrFrom4([4]byte{10, 0, 3, 2})}

// emulatorHost reports whether a Host header is an emulator's alias for its host machine.
// It says nothing about where the connection came from: see localHost.
func emulatorHost(host string) bool {
	a, err := netip.ParseAddr(hostName(host))
	return err == nil && slices.Contains(emulatorAliases[:], a)
}

// hostName strips the port and IPv6 brackets from a Host header.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
}

func refuse(w http.ResponseWriter, code int) {
	w.Header().Set("Connection", "close")
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(code)
}

// endUpgradeLocked gives back the place an admitted upgrade held in the session budget:
// when it failed, or as its session attaches (then in the same critical section, so that
// the session is never counted twice: an app counted twice could be taken for the app
// holding the most and lose a session to a newcomer).
func (s *Server) endUpgradeLocked(t *ticket) {
	if s.upgrading[t] {
		delete(s.upgrading, t)
		s.occupied.add(t.grantID, -1)
	}
}

// displace ends a session to make room for an upgrade of app.
func (s *Server) displace(sess *Session, app, reason string) {
	s.log.Warn("host: sessions full: ending a session to make room", "session", sess.id, "app", sess.appID, "for", app, "why", reason)
	sess.disconnect(transport.StatusNormalClosure, reason)
}
