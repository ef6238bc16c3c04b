package host

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/wire"
)

// ticket is what an accepted enrollment leaves for the upgrade: the single-use WebSocket
// token (the map key is its hash) authorizes one connection for this grant.
type ticket struct {
	grantID          string
	configID         string
	appID            string
	deviceID         string
	deviceName       string
	processSessionID string
	policy           wire.Policy
	source           netip.Addr
	expires          time.Time
	seq              uint64 // order of issue: the budget drops the oldest first
}

// serveEnrollment answers datagrams one at a time until the socket closes. Handling is
// short (a store write at most), and serial handling bounds the work a flood can cause.
func (s *Server) serveEnrollment(udp *net.UDPConn) {
	buf := make([]byte, 64<<10)
	for {
		n, src, err := udp.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.log.Debug("host: enrollment read", "err", err)
			continue
		}
		reply := s.handleDatagram(buf[:n], src)
		if reply == nil {
			continue
		}
		// Answer from the listening socket, so the reply's source port is the discovery
		// port: Swift's connected UDP flow only accepts that.
		if _, err := udp.WriteToUDPAddrPort(reply, src); err != nil {
			s.log.Debug("host: enrollment reply", "to", src.String(), "err", err)
		}
	}
}

// handleDatagram returns the ENROLLMENT_RESULT for one datagram, or nil when the datagram
// must go unanswered: over the source's rate limit, or malformed beyond answering (see
// pairing.ParseEnrollmentConnect: a request with one usable requestId whose only fault is
// a duplicate name or an over-long string is refused with a reason, not ignored).
func (s *Server) handleDatagram(data []byte, src netip.AddrPort) []byte {
	now := s.now()
	s.mu.Lock()
	allowed := s.limiter.allow(src.Addr(), now)
	s.mu.Unlock()
	if !allowed {
		s.log.Debug("host: enrollment rate limited", "from", src.Addr().String())
		return nil
	}
	req, err := pairing.ParseEnrollmentConnect(data)
	var res *pairing.EnrollmentResult
	switch {
	case err != nil && req == nil:
		s.log.Debug("host: dropped malformed enrollment datagram", "from", src.String(), "err", err)
		return nil
	case err != nil:
		reason, text := req.Refusal()
		s.log.Info("host: enrollment refused as malformed", "from", src.String(), "reason", string(reason), "err", err)
		res = &pairing.EnrollmentResult{RequestID: req.RequestID, Reason: reason, ReasonMessage: text,
			HostID: s.HostID(), HostName: s.opts.HostName, Message: text}
	default:
		res = s.enroll(req, src.Addr(), now)
	}
	b, err := res.Marshal()
	if err != nil {
		s.log.Error("host: encode enrollment result", "err", err)
		return nil
	}
	return b
}

// enroll authorizes req and, when accepted, mints the WebSocket token.
func (s *Server) enroll(req *pairing.EnrollmentConnect, src netip.Addr, now time.Time) *pairing.EnrollmentResult {
	s.mu.Lock()
	auth := authorize(s.store, req, src, now)
	if auth.changed {
		s.store.prune(now)
		if auth.grant.Mode == GrantLocal {
			// A lost local grant is made again on the next connection: no need to write
			// (and fsync) at once, which a flood of new local installations would make
			// the serial enrollment loop do for every datagram.
			s.pruneLocalGrantsLocked(auth.grant)
			s.saveSoonLocked()
		} else if err := s.store.save(); err != nil {
			// The grant holds for this run; the next run asks the device to enroll again.
			s.log.Error("host: pairing store not saved", "err", err)
		}
	}
	var token string
	if auth.reason == pairing.ReasonOK && !s.wsAddr.IsValid() {
		auth.reason = pairing.ReasonWebSocketUnavailable // not listening (yet, or any more)
	}
	if auth.reason == pairing.ReasonOK {
		token = s.mintTicketLocked(auth.grant, req, src, now)
	}
	port := int(s.wsAddr.Port())
	hostID := s.store.data.HostID
	s.mu.Unlock()

	res := &pairing.EnrollmentResult{
		RequestID: req.RequestID, Reason: auth.reason, ReasonMessage: auth.reason.Text(),
		HostID: hostID, HostName: s.opts.HostName, Message: auth.reason.Text(),
	}
	attrs := []any{"mode", req.Mode(), "appId", req.AppID, "deviceId", req.DeviceID, "from", src.String(), "reason", string(auth.reason)}
	if auth.reason != pairing.ReasonOK {
		s.log.Info("host: enrollment rejected", attrs...)
		return res
	}
	// The grant's id is logged at debug level only: an opaque random string in a log looks
	// like a secret (it is not one: 'ansight pairing list' shows it).
	s.log.Info("host: enrollment accepted", append(attrs, "grant", string(auth.grant.MaxToolPolicy))...)
	s.log.Debug("host: enrollment pairing", "appId", req.AppID, "pairing", auth.grant.GrantID)
	res.Accepted = true
	res.Message = fmt.Sprintf("Connection accepted. WebSocket issued on port %d.", port)
	res.WebSocketPort = port
	res.WebSocketPath = pairing.WebSocketPath
	res.WebSocketToken = token
	return res
}

// maxTokensPerGrant bounds the unused WebSocket tokens of one grant. An app connects with
// the token of its latest enrollment, so when a new one would exceed the bound, the
// grant's oldest is dropped: one installation enrolling in a loop holds only a few.
const maxTokensPerGrant = 4

// mintTicketLocked stores a ticket for g and returns its token. It never refuses: when the
// grant already holds maxTokensPerGrant unused tokens its oldest is dropped, and when the
// table holds MaxTokens the oldest unused token of all is, so that a flood of enrollments
// never leaves a legitimate app without a token (its own is the newest, and it uses it at
// once).
func (s *Server) mintTicketLocked(g *grantRecord, req *pairing.EnrollmentConnect, src netip.Addr, now time.Time) string {
	var oldest, oldestOfGrant *ticket
	var oldestKey, oldestOfGrantKey string
	ofGrant := 0
	for k, t := range s.tickets {
		if now.After(t.expires) {
			delete(s.tickets, k)
			continue
		}
		if oldest == nil || t.seq < oldest.seq {
			oldest, oldestKey = t, k
		}
		if t.grantID == g.GrantID {
			ofGrant++
			if oldestOfGrant == nil || t.seq < oldestOfGrant.seq {
				oldestOfGrant, oldestOfGrantKey = t, k
			}
		}
	}
	switch {
	case ofGrant >= maxTokensPerGrant:
		delete(s.tickets, oldestOfGrantKey)
	case len(s.tickets) >= s.opts.MaxTokens:
		delete(s.tickets, oldestKey)
	}
	token := pairing.NewToken(pairing.WebSocketTokenBytes)
	s.tickets[pairing.HashToken(token)] = &ticket{
		grantID: g.GrantID, configID: g.ConfigID, appID: g.AppID, deviceID: g.DeviceID,
		deviceName: pairing.NormalizeDeviceName(req.DeviceName), processSessionID: req.ProcessSessionID,
		policy: g.MaxToolPolicy, source: src, expires: now.Add(s.opts.TokenTTL), seq: s.ticketSeq,
	}
	s.ticketSeq++
	return token
}

// redeemLocked consumes the ticket for token: a token works once, within its TTL.
func (s *Server) redeemLocked(token string, now time.Time) *ticket {
	if token == "" {
		return nil
	}
	key := pairing.HashToken(token)
	t := s.tickets[key]
	if t == nil {
		return nil
	}
	delete(s.tickets, key)
	if now.After(t.expires) {
		return nil
	}
	// The grant may have been revoked since the enrollment.
	if g := s.store.grantByID(t.grantID); g == nil || !g.active(now) {
		return nil
	}
	return t
}
