package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/internal/fanout"
	"github.com/ansight-go/ansight/wire"
)

// Defaults of ClientOptions.
const (
	// DefaultTimeout bounds a listing of the fleet's sessions.
	DefaultTimeout = 20 * time.Second
	// DefaultDiscoverWait bounds how long a new client waits for the hosts that others
	// name but that do not answer (a host that died moments ago).
	DefaultDiscoverWait = 2 * time.Second
)

// ClientOptions configures a Client.
type ClientOptions struct {
	Config
	// ArtifactDir is where the artifacts of calls are saved: <ArtifactDir>/<host>/<session>/.
	// Without it, calls that return artifacts report them failed.
	ArtifactDir string
	// Timeout bounds a listing (DefaultTimeout). Calls are bounded by their own timeout,
	// applied by the host, and by the host's alive messages.
	Timeout time.Duration
	// DiscoverWait bounds the first listing's wait for silent hosts (DefaultDiscoverWait).
	DiscoverWait time.Duration
	// Version is reported by Status.
	Version string
	// Home, when set, is the host this client runs beside (the player of a fleet member):
	// its sessions keep their plain ids and are served in process, without NATS.
	Home *Home
}

// Home is the host a Client runs beside.
type Home struct {
	// Name is the host's name in the fleet.
	Name string
	// Backend is the host's control API in process; the client's subscribers see its
	// session events too.
	Backend hostapi.Backend
}

// Client is a hostapi.Backend over a fleet: it lists the sessions of every host and sends
// each request to the host that owns the session, over NATS request/reply. Session ids are
// qualified with their host ("<session>@<host>"); an id without a host is taken when one
// host alone has it. The owning host applies its own grant to every call: the fleet never
// widens it. Pairing (invites, grants) and a session's crash reports and annotations stay
// on each host: those operations are refused, except for the Home host's sessions.
type Client struct {
	opts    ClientOptions
	subj    subjects
	log     *slog.Logger
	nc      *nats.Conn
	mux     atomic.Pointer[mux]
	dir     *directory
	subs    []*nats.Subscription
	started time.Time

	policies policyCache
	events   fanout.Hub[hostapi.Event]
	stop     chan struct{}
	wg       sync.WaitGroup
	once     sync.Once
}

var _ hostapi.Backend = (*Client)(nil)

// Dial connects to the fleet and asks every host for its sessions; it returns once they
// answered (or DiscoverWait passed for those that did not). The connection reconnects by
// itself; Close ends it.
func Dial(ctx context.Context, opts ClientOptions) (*Client, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.DiscoverWait <= 0 {
		opts.DiscoverWait = DefaultDiscoverWait
	}
	if opts.Home != nil {
		if err := ValidName(opts.Home.Name); err != nil {
			return nil, fmt.Errorf("home host: %w", err)
		}
	}
	c := &Client{opts: opts, subj: newSubjects(opts.fleetName()), log: opts.logger(), dir: newDirectory(),
		started: time.Now(), stop: make(chan struct{})}
	nc, err := dial(opts.Config, "ansight client", handlers{
		disconnected: func(error) {
			if m := c.mux.Load(); m != nil {
				m.failAll(apiError(wire.CodeDisconnected, "lost the connection to the fleet's NATS server; the request may or may not have run"))
			}
		},
		asyncError: func(sub *nats.Subscription, err error) {
			if m := c.mux.Load(); m != nil {
				m.asyncError(sub, err)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	c.nc = nc
	m := newMux(nc)
	c.mux.Store(m) // before the subscription: the error handler finds the mux
	err = m.subscribe(ctx)
	if err == nil {
		c.subs = append(c.subs, m.sub)
		var sub *nats.Subscription
		if sub, err = nc.Subscribe(c.subj.presenceAll(), c.onPresence); err == nil {
			c.subs = append(c.subs, sub)
			err = flush(ctx, nc)
		}
	}
	if err == nil {
		err = c.discover(ctx)
	}
	if err != nil {
		nc.Close()
		return nil, c.backendError(err)
	}
	c.wg.Go(c.janitor)
	if h := opts.Home; h != nil {
		ctx, cancel := context.WithCancel(context.Background())
		c.wg.Go(func() {
			defer cancel()
			<-c.stop
		})
		c.wg.Go(func() {
			h.Backend.Events(ctx, func(ev hostapi.Event) error { // until Close
				c.events.Publish(ev)
				return nil
			})
		})
	}
	return c, nil
}

// Close disconnects from the fleet and ends the client's subscriptions.
func (c *Client) Close() error {
	c.once.Do(func() {
		close(c.stop)
		c.wg.Wait()
		c.events.Close()
		c.nc.Close()
	})
	return nil
}

// Fleet is the fleet's name.
func (c *Client) Fleet() string { return c.opts.fleetName() }

// Hosts returns the presence of every host the client knows alive, by name.
func (c *Client) Hosts() []Presence {
	var out []Presence
	for _, name := range c.dir.names() {
		if p, ok := c.dir.presence(name); ok {
			out = append(out, p)
		}
	}
	return out
}

// Events implements hostapi.Backend: the changes of the fleet's listing, EventUpdated when
// a host joins, leaves, dies or announces a change of its sessions, and the Home host's
// own events. An event is dropped for a subscriber that has no room for it; the events end
// UI implements hostapi.Backend: the operation over the fleet's calls, each routed to the
// host that owns the session.
func (c *Client) UI(ctx context.Context, sessionID string, req hostapi.UIRequest) (*hostapi.UIOperation, error) {
	return hostapi.RunUI(ctx, c, sessionID, req)
}

// with Close.
func (c *Client) Events(ctx context.Context, fn func(hostapi.Event) error) error {
	events, unsubscribe := c.events.Subscribe(64)
	defer unsubscribe()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-events:
			if !ok {
				return apiError(wire.CodeDisconnected, "the fleet client is closed")
			}
			if err := fn(ev); err != nil {
				return err
			}
		}
	}
}

// onPresence follows the hosts' presence messages.
func (c *Client) onPresence(msg *nats.Msg) {
	var p Presence
	if wire.Unmarshal(msg.Data, &p) != nil {
		return
	}
	if c.dir.observe(p) {
		c.events.Publish(hostapi.Event{Kind: hostapi.EventUpdated})
	}
}

// janitor drops the hosts that stopped announcing themselves.
func (c *Client) janitor() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		if gone := c.dir.expire(); len(gone) > 0 {
			c.log.Info("fleet: hosts stopped announcing themselves", "hosts", gone)
			c.events.Publish(hostapi.Event{Kind: hostapi.EventUpdated})
		}
	}
}

// target is the session a request is for.
type target struct {
	id   string // as the caller knows it: qualified, or plain for the Home host
	host string
	sid  string // the host's own id
	home bool
}

// resolve finds the host of a session id.
func (c *Client) resolve(ctx context.Context, id string) (target, error) {
	sid, h := SplitID(id)
	if h != "" {
		if ValidName(h) != nil || sid == "" {
			return target{}, apiError(wire.CodeSessionNotFound, "no session %q in fleet %s (see 'ansight session list')", id, c.Fleet())
		}
		if home := c.opts.Home; home != nil && h == home.Name {
			return target{id: sid, host: h, sid: sid, home: true}, nil
		}
		return target{id: id, host: h, sid: sid}, nil
	}
	if home := c.opts.Home; home != nil {
		if _, err := home.Backend.Session(ctx, sid); err == nil {
			return target{id: sid, host: home.Name, sid: sid, home: true}, nil
		}
	}
	list, err := c.Sessions(ctx)
	if err != nil {
		return target{}, err
	}
	var hosts []string
	for _, s := range list.Sessions {
		if local, _ := SplitID(s.ID); local == sid && s.Host != "" {
			hosts = append(hosts, s.Host)
		}
	}
	switch len(hosts) {
	case 0:
		return target{}, apiError(wire.CodeSessionNotFound, "no session %q in fleet %s (see 'ansight session list')", id, c.Fleet())
	case 1:
		return target{id: QualifiedID(sid, hosts[0]), host: hosts[0], sid: sid}, nil
	}
	return target{}, apiError(wire.CodeSessionAmbiguous, "session %q is on hosts %s: name one as %s@<host>", id, strings.Join(hosts, ", "), id)
}

// Status implements hostapi.Backend: the fleet as one host (the sessions of every host).
func (c *Client) Status(ctx context.Context) (*hostapi.Status, error) {
	list, err := c.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, s := range list.Sessions {
		if s.State == hostapi.StateConnected {
			n++
		}
	}
	return &hostapi.Status{Schema: hostapi.SchemaStatus, Version: c.opts.Version, PID: os.Getpid(), StartedAt: c.started, Sessions: n}, nil
}

// Session implements hostapi.Backend.
func (c *Client) Session(ctx context.Context, id string) (*hostapi.Session, error) {
	t, err := c.resolve(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.home {
		s, err := c.opts.Home.Backend.Session(ctx, t.sid)
		if err == nil {
			s.Host = t.host
		}
		return s, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	list, err := c.hostList(ctx, t.host)
	if err != nil {
		return nil, err
	}
	for _, s := range list {
		if s.ID == t.sid {
			s.ID = t.id
			return &s, nil
		}
	}
	return nil, apiError(wire.CodeSessionNotFound, "no session %q on host %s (see 'ansight session list')", t.sid, t.host)
}

// Tools implements hostapi.Backend.
func (c *Client) Tools(ctx context.Context, sessionID string, req hostapi.ToolsRequest) (*hostapi.Tools, error) {
	t, err := c.resolve(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	var out *hostapi.Tools
	if t.home {
		out, err = c.opts.Home.Backend.Tools(ctx, t.sid, req)
	} else {
		out = new(hostapi.Tools)
		err = c.roundTrip(ctx, t.host, c.subj.op(t.host, opTools, ""), request{Session: t.sid, Tools: &req}, out, nil)
	}
	if err != nil {
		return nil, err
	}
	out.SessionID = t.id
	for _, e := range out.Tools {
		c.policies.put(t.id, e.ID, e.Policy)
	}
	return out, nil
}

// Rename implements hostapi.Backend: the session's own host renames it (the label is kept
// with that host's recording).
func (c *Client) Rename(ctx context.Context, sessionID string, req hostapi.RenameRequest) (*hostapi.Renaming, error) {
	t, err := c.resolve(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	var out *hostapi.Renaming
	if t.home {
		out, err = c.opts.Home.Backend.Rename(ctx, t.sid, req)
	} else {
		out = new(hostapi.Renaming)
		err = c.roundTrip(ctx, t.host, c.subj.op(t.host, opRename, ""), request{Session: t.sid, Rename: &req}, out, nil)
	}
	if err != nil {
		return nil, err
	}
	out.SessionID = t.id
	return out, nil
}

// Tool implements hostapi.Backend.
func (c *Client) Tool(ctx context.Context, sessionID, toolID string) (*hostapi.Tool, error) {
	t, err := c.resolve(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	var out *hostapi.Tool
	if t.home {
		out, err = c.opts.Home.Backend.Tool(ctx, t.sid, toolID)
	} else {
		out = new(hostapi.Tool)
		err = c.roundTrip(ctx, t.host, c.subj.op(t.host, opTool, ""), request{Session: t.sid, ToolID: toolID}, out, nil)
	}
	if err != nil {
		return nil, err
	}
	out.SessionID = t.id
	c.policies.put(t.id, out.Tool.ID, out.Tool.Policy)
	return out, nil
}

// Call implements hostapi.Backend. The call goes to the subject of its tool's policy
// class (the client learns policies from the catalogs it lists and from the host, which
// refuses a call on a class below its tool's); artifacts are fetched from the host into
// ArtifactDir, their progress reported after the host's own.
func (c *Client) Call(ctx context.Context, sessionID string, req hostapi.CallRequest, progress func(hostapi.Progress)) (*hostapi.Call, error) {
	t, err := c.resolve(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if t.home {
		return c.opts.Home.Backend.Call(ctx, t.sid, req, progress)
	}
	var ans callAnswer
	class, err := c.classed(ctx, t, opCall, []string{req.ToolID}, request{Session: t.sid, Call: &req}, &ans, progress)
	var pe *permissionError
	if errors.As(err, &pe) {
		return &hostapi.Call{Schema: hostapi.SchemaCall, SessionID: t.id, ToolID: req.ToolID, Error: deniedCall(pe.subject, class)}, nil
	}
	if err != nil {
		return nil, c.backendError(err)
	}
	if ans.Call == nil {
		return nil, apiError(wire.CodeProtocol, "host %s answered a call without its outcome", t.host)
	}
	ans.Call.SessionID = t.id
	c.download(ctx, t.host, t.sid, ans.Call.Artifacts, ans.Blobs, progress)
	return ans.Call, nil
}

// Batch implements hostapi.Backend, as Call: the batch goes to the class of its highest
// policy.
func (c *Client) Batch(ctx context.Context, sessionID string, req hostapi.BatchRequest, progress func(hostapi.Progress)) (*hostapi.Batch, error) {
	t, err := c.resolve(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if t.home {
		return c.opts.Home.Backend.Batch(ctx, t.sid, req, progress)
	}
	ids := make([]string, len(req.Calls))
	for i, call := range req.Calls {
		ids[i] = call.ToolID
	}
	var ans batchAnswer
	class, err := c.classed(ctx, t, opBatch, ids, request{Session: t.sid, Batch: &req}, &ans, progress)
	var pe *permissionError
	if errors.As(err, &pe) {
		return &hostapi.Batch{Schema: hostapi.SchemaBatch, SessionID: t.id, Error: deniedCall(pe.subject, class)}, nil
	}
	if err != nil {
		return nil, c.backendError(err)
	}
	if ans.Batch == nil {
		return nil, apiError(wire.CodeProtocol, "host %s answered a batch without its outcome", t.host)
	}
	ans.Batch.SessionID = t.id
	c.download(ctx, t.host, t.sid, ans.Batch.Artifacts, ans.Blobs, progress)
	return ans.Batch, nil
}

// classed sends a call or batch on the subject of the highest policy the client knows
// for its tools (read when it knows none). When the host answers that a tool's policy is
// higher, it sends it once more on that class.
func (c *Client) classed(ctx context.Context, t target, op string, toolIDs []string, req request, out any, progress func(hostapi.Progress)) (wire.Policy, error) {
	class := wire.PolicyRead
	for _, id := range toolIDs {
		if p := c.policies.get(t.id, id); p.Rank() > class.Rank() {
			class = p
		}
	}
	for retried := false; ; retried = true {
		data, err := c.exchange(ctx, t.host, c.subj.op(t.host, op, class), req, progress)
		var eb *errorBody
		if errors.As(err, &eb) && eb.Code == wire.CodeClassMismatch && eb.Policy.Rank() > class.Rank() && !retried {
			class = eb.Policy
			if len(toolIDs) == 1 {
				c.policies.put(t.id, toolIDs[0], class)
			}
			continue
		}
		if err != nil {
			return class, err
		}
		if err := wire.Unmarshal(data, out); err != nil {
			return class, apiError(wire.CodeProtocol, "host %s sent an unreadable answer: %v", t.host, err)
		}
		return class, nil
	}
}

// policyCache remembers the policies of the tools the client has seen, per session, to
// send each call on its class at once. It is bounded: when full, it starts over.
type policyCache struct {
	mu sync.Mutex
	m  map[string]wire.Policy
}

const maxPolicies = 16384

func (p *policyCache) get(session, tool string) wire.Policy {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m[session+"\x00"+tool]
}

func (p *policyCache) put(session, tool string, policy wire.Policy) {
	if !policy.Valid() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil || len(p.m) >= maxPolicies {
		p.m = map[string]wire.Policy{}
	}
	p.m[session+"\x00"+tool] = policy
}

// sortSessions orders a fleet's listing: connected sessions first, then by host and id.
func sortSessions(list []hostapi.Session) {
	slices.SortStableFunc(list, func(a, b hostapi.Session) int {
		if ca, cb := a.State == hostapi.StateConnected, b.State == hostapi.StateConnected; ca != cb {
			if ca {
				return -1
			}
			return 1
		}
		if a.Host != b.Host {
			return strings.Compare(a.Host, b.Host)
		}
		return strings.Compare(a.ID, b.ID)
	})
}
