package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/nats-io/nats.go"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// Defaults of MemberOptions.
const (
	// DefaultHeartbeat is the interval of a host's presence messages: a host that dies
	// disappears from listings three heartbeats (15 s) after its last one.
	DefaultHeartbeat = 5 * time.Second
	// DefaultAlive is the interval of the alive messages a host sends while it works on a
	// request: a requester notices a dead host three of them (3 s) after its last one.
	DefaultAlive = time.Second
	// DefaultMaxRequests bounds the fleet requests a host serves at once; beyond, it
	// answers wire.CodeBusy.
	DefaultMaxRequests = 256
	// DefaultReconnectWait is the pause between attempts to reach NATS again.
	DefaultReconnectWait = time.Second
)

// changeDelay gathers the session changes of a burst (many apps connecting at once) into
// one presence message.
const changeDelay = 50 * time.Millisecond

// headroom is what a message keeps free for its headers below the server's max_payload.
const headroom = 4 << 10

// MemberOptions configures a host's membership of a fleet.
type MemberOptions struct {
	Config
	// Host names this host in the fleet (ValidName): session ids are qualified with it and
	// its requests come on ansight.<fleet>.host.<Host>.…; two hosts of a fleet cannot share
	// it. Required.
	Host string
	// Version is announced in the host's presence.
	Version string
	// Heartbeat is the interval of presence messages (DefaultHeartbeat); Alive that of
	// alive messages during a request (DefaultAlive).
	Heartbeat, Alive time.Duration
	// MaxRequests bounds the requests served at once (DefaultMaxRequests).
	MaxRequests int
}

// Member is a host's membership of a fleet: it announces the host's sessions and serves
// the fleet's requests for them through the host's control API, in process. Close leaves.
type Member struct {
	opts  MemberOptions
	subj  subjects
	api   hostapi.Backend
	log   *slog.Logger
	nc    *nats.Conn
	peers *directory
	blobs *blobs

	started time.Time
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	kick    chan struct{}
	sem     chan struct{}
	subs    []*nats.Subscription

	// snap is the session list last made: listings are answered from it, so that a
	// thousand sessions are listed and encoded once per change, not once per request.
	// dirty says that the host reported a change since.
	snap  atomic.Pointer[snapshot]
	dirty atomic.Bool

	mu       sync.Mutex
	inflight map[string]context.CancelFunc // reply subject → the request's cancel
	closed   bool
}

// Join makes a host a member of the fleet: it connects to NATS, checks that no other host
// of the fleet has its name, announces the host's sessions and serves requests for them
// with api, the host's control API in process (package host/control's), whose session
// events it follows. The connection reconnects by itself; the host announces itself again
// each time.
func Join(ctx context.Context, api hostapi.Backend, opts MemberOptions) (*Member, error) {
	if err := ValidName(opts.Host); err != nil {
		return nil, fmt.Errorf("host name: %w", err)
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.Alive <= 0 {
		opts.Alive = DefaultAlive
	}
	if opts.MaxRequests <= 0 {
		opts.MaxRequests = DefaultMaxRequests
	}
	m := &Member{
		opts: opts, subj: newSubjects(opts.fleetName()), api: api, log: opts.logger(),
		peers: newDirectory(), blobs: newBlobs(), started: time.Now(),
		kick: make(chan struct{}, 1), sem: make(chan struct{}, opts.MaxRequests), inflight: map[string]context.CancelFunc{},
	}
	nc, err := dial(opts.Config, "ansight host "+opts.Host, handlers{reconnected: m.changed})
	if err != nil {
		return nil, err
	}
	m.nc = nc
	if err := m.claimName(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	m.ctx, m.cancel = context.WithCancel(context.WithoutCancel(ctx))
	for subject, handler := range map[string]nats.MsgHandler{
		m.subj.hostAll(opts.Host): m.onRequest,
		m.subj.discover():         m.onDiscover,
		m.subj.presenceAll():      m.onPresence,
	} {
		sub, err := nc.Subscribe(subject, handler)
		if err != nil {
			m.cancel()
			nc.Close()
			return nil, fmt.Errorf("fleet: subscribe to %s: %w", subject, err)
		}
		m.subs = append(m.subs, sub)
	}
	if err := flush(ctx, nc); err != nil {
		m.cancel()
		nc.Close()
		return nil, fmt.Errorf("fleet: %w", err)
	}
	m.announce(false)
	m.wg.Go(func() {
		m.api.Events(m.ctx, func(hostapi.Event) error { // until Close
			m.dirty.Store(true)
			m.changed()
			return nil
		})
	})
	m.wg.Go(m.announceLoop)
	m.wg.Go(m.aliveLoop)
	m.log.Info("fleet: joined", "fleet", opts.fleetName(), "host", opts.Host, "server", nc.ConnectedUrlRedacted())
	return m, nil
}

// claimName refuses to join when a host of the fleet already answers to this name: two
// hosts on one subject would both answer every request.
func (m *Member) claimName(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := m.nc.RequestWithContext(ctx, m.subj.op(m.opts.Host, opPing, ""), nil)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return nil
	case err == nil:
		return fmt.Errorf("fleet: a host named %q is already in fleet %q (give this one another name)", m.opts.Host, m.opts.fleetName())
	case ctx.Err() != nil:
		return fmt.Errorf("fleet: a host named %q seems to be in fleet %q but does not answer (give this one another name)", m.opts.Host, m.opts.fleetName())
	}
	return fmt.Errorf("fleet: %w", err)
}

// Host is the member's name in the fleet.
func (m *Member) Host() string { return m.opts.Host }

// Fleet is the fleet's name.
func (m *Member) Fleet() string { return m.opts.fleetName() }

// Close leaves the fleet: the host stops taking requests, ends those it serves (their
// requesters get an error), announces that it leaves and disconnects.
func (m *Member) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	for _, sub := range m.subs {
		sub.Unsubscribe()
	}
	m.cancel()
	m.wg.Wait()
	m.announce(true)
	m.nc.FlushTimeout(time.Second)
	m.nc.Close()
	return nil
}

// changed asks for a presence message soon (sessions changed, or NATS reconnected).
func (m *Member) changed() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// announceLoop sends the presence every heartbeat, and soon after changes.
func (m *Member) announceLoop() {
	m.every(m.opts.Heartbeat, m.kick, func() { m.announce(false) })
}

// every calls fn each period until the member stops, and soon after a signal on kick (nil:
// none) too: changeDelay later, so that one call covers a burst of changes.
func (m *Member) every(period time.Duration, kick <-chan struct{}, fn func()) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-t.C:
		case <-kick:
			select {
			case <-time.After(changeDelay):
			case <-m.ctx.Done():
				return
			}
			select { // the changes of the delay are in this call
			case <-kick:
			default:
			}
		}
		fn()
	}
}

// announce publishes the host's presence.
func (m *Member) announce(leaving bool) {
	var p *Presence
	if leaving {
		p = &Presence{Schema: SchemaPresence, Host: m.opts.Host, StartedAt: m.started, Leaving: true}
	} else {
		m.dirty.Store(false)
		snap, err := m.snapshot()
		if err != nil {
			m.log.Warn("fleet: list sessions", "err", err)
			return
		}
		m.snap.Store(snap)
		p = snap.presence
	}
	data, err := json.Marshal(p)
	if err == nil {
		err = m.nc.Publish(m.subj.presence(m.opts.Host), data)
	}
	if err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		m.log.Debug("fleet: announce", "err", err)
	}
}

// announced is the snapshot last made, made again first if the host reported a change
// since (the presence announcing it follows within changeDelay).
func (m *Member) announced() (*snapshot, error) {
	if snap := m.snap.Load(); snap != nil && !m.dirty.Load() {
		return snap, nil
	}
	m.dirty.Store(false)
	snap, err := m.snapshot()
	if err != nil {
		m.dirty.Store(true)
		return nil, err
	}
	m.snap.Store(snap)
	return snap, nil
}

// snapshot is the host's session list with its revision and the presence announcing it.
type snapshot struct {
	list     jsontext.Value // the sessions, encoded
	revision string
	presence *Presence
}

func (m *Member) snapshot() (*snapshot, error) {
	ctx, cancel := context.WithTimeout(m.ctx, 5*time.Second)
	defer cancel()
	s, err := m.api.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	connected := 0
	for i := range s.Sessions {
		s.Sessions[i].Host = m.opts.Host
		if s.Sessions[i].State == hostapi.StateConnected {
			connected++
		}
	}
	data, err := json.Marshal(s.Sessions, json.Deterministic(true))
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	rev := hex.EncodeToString(sum[:12])
	return &snapshot{list: data, revision: rev, presence: &Presence{
		Schema: SchemaPresence, Host: m.opts.Host, Version: m.opts.Version, StartedAt: m.started,
		Revision: rev, Sessions: len(s.Sessions), Connected: connected,
		HeartbeatMS: m.opts.Heartbeat.Milliseconds(), AliveMS: m.opts.Alive.Milliseconds(), Peers: m.peerNames(),
	}}, nil
}

// peerNames are the hosts this host sees in the fleet, itself included.
func (m *Member) peerNames() []string {
	peers := m.peers.names()
	if !slices.Contains(peers, m.opts.Host) {
		peers = append(peers, m.opts.Host)
	}
	return peers
}

// onPresence follows the fleet's other hosts, for the peers a presence names. A host
// that joins is answered with this host's presence at once, so that it knows its peers
// without waiting for their heartbeats.
func (m *Member) onPresence(msg *nats.Msg) {
	var p Presence
	if wire.Unmarshal(msg.Data, &p) != nil {
		return
	}
	_, known := m.peers.presence(p.Host)
	if m.peers.observe(p) && !known && !p.Leaving && p.Host != m.opts.Host {
		m.changed()
	}
}

// onDiscover answers a client asking every host at once: the presence, with the session
// list when it fits in the message. Like every listing, it is the list last announced:
// what a client learns from a listing and from presence messages always agrees.
func (m *Member) onDiscover(msg *nats.Msg) {
	if msg.Reply == "" {
		return
	}
	snap, err := m.announced()
	if err != nil {
		m.publish(msg.Reply, kindError, mustJSON(bodyOf(err)))
		return
	}
	p := *snap.presence
	p.Peers = m.peerNames() // as of now: the snapshot may be older than the last host to join
	a := hostSessionsOut{Presence: &p, Revision: snap.revision, Sessions: snap.list}
	data, err := json.Marshal(a)
	if err == nil && len(data) > m.maxBody() {
		a.Sessions, a.Partial = nil, true
		data, err = json.Marshal(a)
	}
	if err != nil {
		m.publish(msg.Reply, kindError, mustJSON(bodyOf(err)))
		return
	}
	m.publish(msg.Reply, kindResult, data)
}

// maxBody is the largest body a message takes on this connection.
func (m *Member) maxBody() int { return int(m.nc.MaxPayload()) - headroom }

// aliveLoop tells the requesters of the requests in progress that the host still works on
// them.
func (m *Member) aliveLoop() {
	m.every(m.opts.Alive, nil, func() {
		m.mu.Lock()
		replies := make([]string, 0, len(m.inflight))
		for r := range m.inflight {
			replies = append(replies, r)
		}
		m.mu.Unlock()
		for _, r := range replies {
			m.publish(r, kindAlive, nil)
		}
	})
}

// publish sends one answer message.
func (m *Member) publish(reply, kind string, data []byte) {
	err := m.nc.PublishMsg(&nats.Msg{Subject: reply, Header: nats.Header{kindHeader: []string{kind}}, Data: data})
	if err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		m.log.Debug("fleet: answer", "err", err)
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(errorBody{Code: wire.CodeInternal, Message: err.Error()})
	}
	return b
}
