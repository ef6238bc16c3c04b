package host

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sync"
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
	// key is the ticket's place in the ticketTable (its token's hash), "" once it was
	// redeemed or dropped.
	key string
}

// Enrollment is served by two goroutines. The reader reads datagrams, drops those over
// their sender's rate (enrollLimiter) and queues the rest (enrollQueue): it takes no lock
// but the limiter's and the queue's, so it drains the socket's receive buffer as fast as
// datagrams arrive, whatever the answers and the pairing store cost. The answerer takes
// queued datagrams in batches: it decides a whole batch under one acquisition of s.mu,
// writes the store once for the batch when an answer needs its change on disk first (an
// invite's use), then sends the answers.

// maxEnrollBatch bounds the datagrams decided under one acquisition of s.mu.
const maxEnrollBatch = 16

// serveEnrollment serves the enrollment socket until it closes.
func (s *Server) serveEnrollment(udp *net.UDPConn) {
	q := newEnrollQueue()
	var answerer sync.WaitGroup
	answerer.Go(func() { s.answerEnrollments(udp, q) })
	s.readEnrollments(udp, q)
	q.close()
	answerer.Wait()
}

// readEnrollments reads datagrams until the socket closes and queues those admitted.
func (s *Server) readEnrollments(udp *net.UDPConn, q *enrollQueue) {
	buf := make([]byte, pairing.MaxDatagramBytes+1) // the extra byte tells an oversized datagram
	for {
		n, src, err := udp.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.log.Debug("host: enrollment read", "err", err)
			continue
		}
		s.enrollStats.received.Add(1)
		if !s.admit(buf[:n], src) {
			continue
		}
		if !q.push(src, buf[:n]) {
			s.enrollStats.queueFull.Add(1)
			s.log.Debug("host: enrollment queue full", "from", src.String())
		}
	}
}

// admit reports whether a datagram from src is to be answered: within its sender's rate,
// and not over the size of any enrollment (ParseEnrollmentConnect would drop it anyway).
func (s *Server) admit(data []byte, src netip.AddrPort) bool {
	if !s.limiter.allow(src, s.now()) {
		s.enrollStats.rateLimited.Add(1)
		s.log.Debug("host: enrollment rate limited", "from", src.String())
		return false
	}
	if len(data) > pairing.MaxDatagramBytes {
		s.log.Debug("host: dropped oversized enrollment datagram", "from", src.String(), "bytes", len(data))
		return false
	}
	return true
}

// answerEnrollments answers queued datagrams until the queue closes. Answers go out from
// the listening socket, so their source port is the discovery port: Swift's connected UDP
// flow only accepts that.
func (s *Server) answerEnrollments(udp *net.UDPConn, q *enrollQueue) {
	var batch []queuedDatagram
	for {
		if batch = q.take(batch, maxEnrollBatch); batch == nil {
			return
		}
		for i, reply := range s.answerBatch(batch) {
			if reply == nil {
				continue
			}
			s.enrollStats.answered.Add(1)
			if _, err := udp.WriteToUDPAddrPort(reply, batch[i].src); err != nil {
				s.log.Debug("host: enrollment reply", "to", batch[i].src.String(), "err", err)
			}
		}
		q.recycle(batch) // the requests decoded from them hold copies of their strings
		// Let the reader run: woken by new datagrams while both processors are busy (this
		// loop, the collector), it would otherwise wait for this goroutine's time slice to
		// end, while the socket's buffer fills (batches of 16 and this yield lost datagrams
		// in 6 of 30 floods, batches of 64 without it in 6 of 10).
		runtime.Gosched()
	}
}

// handleDatagram is the whole path of one datagram: admit, then answer (nil: unanswered).
func (s *Server) handleDatagram(data []byte, src netip.AddrPort) []byte {
	if !s.admit(data, src) {
		return nil
	}
	return s.answerBatch([]queuedDatagram{{src: src, data: data}})[0]
}

// answerBatch returns the ENROLLMENT_RESULT for each datagram of batch, or nil where the
// datagram must go unanswered: malformed beyond answering (see
// pairing.ParseEnrollmentConnect: a request with one usable requestId whose only fault is
// a duplicate name or an over-long string is refused with a reason, not ignored).
func (s *Server) answerBatch(batch []queuedDatagram) [][]byte {
	now := s.now()
	reqs := make([]*pairing.EnrollmentConnect, len(batch))
	results := make([]*pairing.EnrollmentResult, len(batch))
	decide := false
	for i, d := range batch {
		req, err := pairing.ParseEnrollmentConnect(d.data)
		switch {
		case err != nil && req == nil:
			s.log.Debug("host: dropped malformed enrollment datagram", "from", d.src.String(), "err", err)
		case err != nil:
			reason, text := req.Refusal()
			s.log.Info("host: enrollment refused as malformed", "from", d.src.String(), "reason", string(reason), "err", err)
			results[i] = &pairing.EnrollmentResult{RequestID: req.RequestID, Reason: reason, ReasonMessage: text,
				HostID: s.HostID(), HostName: s.opts.HostName, Message: text}
		default:
			reqs[i], decide = req, true
		}
	}
	if decide {
		decisions := make([]enrollDecision, len(batch))
		var snap storeSnapshot
		var saveErr error
		saveNow := false
		s.mu.Lock()
		for i, req := range reqs {
			if req != nil {
				decisions[i] = s.decideLocked(req, batch[i].src.Addr(), now)
				saveNow = saveNow || decisions[i].saveNow
			}
		}
		if saveNow {
			snap, saveErr = s.store.snapshot()
		}
		s.mu.Unlock()
		if saveNow && saveErr == nil {
			saveErr = s.store.write(snap)
		}
		if saveErr != nil {
			// The grant holds for this run; the next run asks the device to enroll again.
			s.log.Error("host: pairing store not saved", "err", saveErr)
		}
		for i, req := range reqs {
			if req != nil {
				results[i] = s.enrollResult(req, batch[i].src.Addr(), decisions[i])
			}
		}
	}
	answers := make([][]byte, len(batch))
	for i, res := range results {
		if res == nil {
			continue
		}
		b, err := res.Marshal()
		if err != nil {
			s.log.Error("host: encode enrollment result", "err", err)
			continue
		}
		answers[i] = b
	}
	return answers
}

// enrollDecision is what enrollment decided for one request under s.mu.
type enrollDecision struct {
	auth   authorization
	token  string // the WebSocket token, when accepted
	port   int
	hostID string
	// saveNow: the store changed in a way that must be on disk before the answer (an
	// invite's use).
	saveNow bool
}

// decideLocked authorizes req and, when accepted, mints the WebSocket token.
func (s *Server) decideLocked(req *pairing.EnrollmentConnect, src netip.Addr, now time.Time) enrollDecision {
	var d enrollDecision
	auth := authorize(s.store, req, src, now)
	if auth.changed {
		s.store.prune(now)
		if auth.grant.Mode == GrantLocal {
			// A lost local grant is made again on the next connection: no need to write
			// (and fsync) at once, which a flood of new local installations would make
			// the answerer do for every datagram.
			s.pruneLocalGrantsLocked(auth.grant)
			s.saveSoonLocked()
		} else {
			d.saveNow = true
		}
	}
	if auth.reason == pairing.ReasonOK && !s.wsAddr.IsValid() {
		auth.reason = pairing.ReasonWebSocketUnavailable // not listening (yet, or any more)
	}
	if auth.reason == pairing.ReasonOK {
		d.token = s.mintTicketLocked(auth.grant, req, src, now)
	}
	d.auth, d.port, d.hostID = auth, int(s.wsAddr.Port()), s.store.data.HostID
	return d
}

// enrollResult is the answer to req once decided, and logs it.
func (s *Server) enrollResult(req *pairing.EnrollmentConnect, src netip.Addr, d enrollDecision) *pairing.EnrollmentResult {
	auth := d.auth
	res := &pairing.EnrollmentResult{
		RequestID: req.RequestID, Reason: auth.reason, ReasonMessage: auth.reason.Text(),
		HostID: d.hostID, HostName: s.opts.HostName, Message: auth.reason.Text(),
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
	res.Message = fmt.Sprintf("Connection accepted. WebSocket issued on port %d.", d.port)
	res.WebSocketPort = d.port
	res.WebSocketPath = pairing.WebSocketPath
	res.WebSocketToken = d.token
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
	token := pairing.NewToken(pairing.WebSocketTokenBytes)
	s.tickets.add(pairing.HashToken(token), &ticket{
		grantID: g.GrantID, configID: g.ConfigID, appID: g.AppID, deviceID: g.DeviceID,
		deviceName: pairing.NormalizeDeviceName(req.DeviceName), processSessionID: req.ProcessSessionID,
		policy: g.MaxToolPolicy, source: src, expires: now.Add(s.opts.TokenTTL),
	}, now, maxTokensPerGrant, s.opts.MaxTokens)
	return token
}

// redeemLocked consumes the ticket for token: a token works once, within its TTL.
func (s *Server) redeemLocked(token string, now time.Time) *ticket {
	if token == "" {
		return nil
	}
	t := s.tickets.take(pairing.HashToken(token))
	if t == nil {
		return nil
	}
	if now.After(t.expires) {
		return nil
	}
	// The grant may have been revoked since the enrollment.
	if g := s.store.grantByID(t.grantID); g == nil || !g.active(now) {
		return nil
	}
	return t
}
