package fleet

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// A client receives every answer on one subscription, <inbox>.*, and routes each message
// to the request waiting for it by the last token of its subject (the request's token).

// maxQueued bounds the interim messages queued for one request; beyond, alive and progress
// messages are dropped (a final message never is).
const maxQueued = 256

// missedAlive is how many alive intervals a requester waits in silence, plus aliveSlack,
// before it takes the host for dead.
const (
	missedAlive = 3
	aliveSlack  = 2 * time.Second
)

// pending is a request waiting for its answers.
type pending struct {
	subject string
	notify  chan struct{} // signalled when msgs or err change
	mu      sync.Mutex
	msgs    []*nats.Msg
	err     error // set when the request cannot be answered (permissions, disconnection)
}

func (p *pending) push(m *nats.Msg) {
	p.mu.Lock()
	if len(p.msgs) >= maxQueued && isInterim(m) {
		p.mu.Unlock()
		return
	}
	p.msgs = append(p.msgs, m)
	p.mu.Unlock()
	p.signal()
}

func (p *pending) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
	p.signal()
}

func (p *pending) signal() {
	select {
	case p.notify <- struct{}{}:
	default:
	}
}

// take returns the queued messages and the failure, if any.
func (p *pending) take() ([]*nats.Msg, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	msgs := p.msgs
	p.msgs = nil
	return msgs, p.err
}

func isInterim(m *nats.Msg) bool {
	k := m.Header.Get(kindHeader)
	return k == kindAlive || k == kindProgress
}

// noResponders reports whether m is the server's answer that nobody subscribes to the
// request's subject.
func noResponders(m *nats.Msg) bool {
	return len(m.Data) == 0 && m.Header.Get("Status") == "503"
}

// mux routes the answers of one connection.
type mux struct {
	nc     *nats.Conn
	prefix string // "<inbox>." of the subscription
	sub    *nats.Subscription

	mu      sync.Mutex
	pending map[string]*pending // token → request
	broken  error               // the subscription itself was refused
}

// newMux makes the router of nc's answers; subscribe starts it. The two are apart so that
// the mux can be made reachable by the connection's error handler before its subscription
// is sent: a refusal handled before that would be lost.
func newMux(nc *nats.Conn) *mux {
	return &mux{nc: nc, prefix: nc.NewInbox() + ".", pending: map[string]*pending{}}
}

// subscribe subscribes to the inbox and returns once the server has taken or refused the
// subscription, with the refusal's error. NATS reports a refusal twice: to the error
// handler (asyncError) on its callback goroutine, whenever that gets to run, and as the
// connection's last error, set as the client reads the refusal, which the server sends
// before the PONG of the flush here. The second is read here so that a refusal is known
// when subscribe returns: on a busy machine the callback can run after the first listing
// has stopped waiting for answers (DiscoverWait), and Dial then succeeded on an inbox that
// receives nothing.
func (m *mux) subscribe(ctx context.Context) error {
	sub, err := m.nc.Subscribe(m.prefix+"*", m.route)
	if err != nil {
		return err
	}
	m.sub = sub
	if err := flush(ctx, m.nc); err != nil {
		return err
	}
	if err := m.nc.LastError(); err != nil {
		m.asyncError(nil, err) // a refusal of another subscription or publish is ignored
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.broken
}

func (m *mux) route(msg *nats.Msg) {
	token := strings.TrimPrefix(msg.Subject, m.prefix)
	m.mu.Lock()
	p := m.pending[token]
	m.mu.Unlock()
	if p != nil {
		p.push(msg)
	}
}

// open registers a request to subject and returns its reply subject.
func (m *mux) open(subject string) (string, *pending, error) {
	token := newBlobID()
	p := &pending{subject: subject, notify: make(chan struct{}, 1)}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.broken != nil {
		return "", nil, m.broken
	}
	m.pending[token] = p
	return m.prefix + token, p, nil
}

func (m *mux) close(reply string) {
	m.mu.Lock()
	delete(m.pending, strings.TrimPrefix(reply, m.prefix))
	m.mu.Unlock()
}

// failAll fails every request waiting (the connection dropped).
func (m *mux) failAll(err error) {
	m.mu.Lock()
	list := make([]*pending, 0, len(m.pending))
	for _, p := range m.pending {
		list = append(list, p)
	}
	m.mu.Unlock()
	for _, p := range list {
		p.fail(err)
	}
}

// publishDenied matches the server's refusal of a publish, as the NATS client reports it.
var publishDenied = regexp.MustCompile(`Publish to "([^"]+)"`)

// asyncError takes the errors NATS reports out of band: a refused publish fails the
// requests made to that subject at once (they would otherwise wait for an answer that
// cannot come), a refused subscription to the inbox fails every request.
func (m *mux) asyncError(sub *nats.Subscription, err error) {
	if !errors.Is(err, nats.ErrPermissionViolation) {
		return
	}
	if denied, ok := refusedPublish(err); ok {
		m.mu.Lock()
		var hit []*pending
		for _, p := range m.pending {
			if p.subject == denied {
				hit = append(hit, p)
			}
		}
		m.mu.Unlock()
		for _, p := range hit {
			p.fail(&permissionError{subject: denied})
		}
		return
	}
	if strings.Contains(err.Error(), m.prefix) {
		e := apiError(wire.CodePermissionDenied, "the fleet's NATS permissions do not let this user receive answers on %s* (see InboxPrefix in docs/fleet.md)", m.prefix)
		m.mu.Lock()
		m.broken = e
		m.mu.Unlock()
		m.failAll(e)
	}
}

// refusedPublish returns the subject of a publish the server refused, if err is that refusal.
func refusedPublish(err error) (string, bool) {
	if !errors.Is(err, nats.ErrPermissionViolation) {
		return "", false
	}
	match := publishDenied.FindStringSubmatch(err.Error())
	if match == nil {
		return "", false
	}
	return match[1], true
}

// permissionError is a request NATS refused to carry.
type permissionError struct{ subject string }

func (e *permissionError) Error() string {
	return "the fleet's NATS permissions do not let this user publish to " + e.subject
}

// exchange sends a request to host and waits for its final answer, reporting progress
// on the way. A host that stays silent for missedAlive of its alive intervals is taken
// for dead; ctx bounds the whole exchange (on its end the host is asked to cancel).
// It returns the final message's body for a result (fetching it when it came as a blob).
func (c *Client) exchange(ctx context.Context, hostName, subject string, req any, progress func(hostapi.Progress)) ([]byte, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > c.nc.MaxPayload() {
		return nil, apiError(wire.CodeBadRequest, "the request is %d bytes, more than the fleet's NATS server takes in a message (%d)", len(body), c.nc.MaxPayload())
	}
	if !c.nc.IsConnected() {
		return nil, apiError(wire.CodeDisconnected, "not connected to the fleet's NATS server (reconnecting); the request was not sent")
	}
	mx := c.mux.Load()
	reply, p, err := mx.open(subject)
	if err != nil {
		return nil, err
	}
	defer mx.close(reply)
	if err := c.nc.PublishMsg(&nats.Msg{Subject: subject, Reply: reply, Data: body}); err != nil {
		return nil, apiError(wire.CodeDisconnected, "send the request: %v", err)
	}
	silence := c.silence(hostName)
	timer := time.NewTimer(silence)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			c.cancelRemote(hostName, reply)
			return nil, ctx.Err()
		case <-timer.C:
			// A refused publish reaches asyncError on NATS's callback goroutine, which a busy
			// machine can run late; the connection's last error, set when the client read the
			// refusal, tells it apart from a silent host (unless a later error replaced it).
			if denied, ok := refusedPublish(c.nc.LastError()); ok && denied == subject {
				return nil, &permissionError{subject: subject}
			}
			return nil, apiError(wire.CodeHostUnavailable, "host %s stopped answering (nothing heard for %v); the request may or may not have run", hostName, silence.Round(time.Millisecond))
		case <-p.notify:
		}
		msgs, err := p.take()
		if err != nil {
			return nil, err
		}
		timer.Reset(silence)
		for _, m := range msgs {
			final, data, err := c.interpret(ctx, hostName, subject, m, progress)
			if final {
				return data, err
			}
		}
	}
}

// interpret reads one answer message: an interim one reports progress and returns
// final false; a final one returns the result's body or the failure.
func (c *Client) interpret(ctx context.Context, hostName, subject string, m *nats.Msg, progress func(hostapi.Progress)) (final bool, data []byte, err error) {
	if noResponders(m) {
		return true, nil, apiError(wire.CodeHostUnavailable, "host %s is not in fleet %s (nobody answers %s)", hostName, c.opts.fleetName(), subject)
	}
	switch m.Header.Get(kindHeader) {
	case kindAlive:
		return false, nil, nil
	case kindProgress:
		var pr hostapi.Progress
		if progress != nil && wire.Unmarshal(m.Data, &pr) == nil {
			progress(pr)
		}
		return false, nil, nil
	case kindResult:
		return true, m.Data, nil
	case kindError:
		var eb errorBody
		if err := wire.Unmarshal(m.Data, &eb); err != nil || eb.Code == "" {
			return true, nil, apiError(wire.CodeProtocol, "host %s sent an unreadable error answer", hostName)
		}
		return true, nil, &eb
	case kindBlob:
		var ref blobRef
		if err := wire.Unmarshal(m.Data, &ref); err != nil || ref.ID == "" || ref.Size < 0 || ref.Size > wire.DefaultMaxMessageBytes {
			return true, nil, apiError(wire.CodeProtocol, "host %s sent an unreadable or oversized blob answer", hostName)
		}
		buf := make([]byte, ref.Size)
		if err := c.fetch(ctx, hostName, ref, bytesAt(buf), nil); err != nil {
			return true, nil, err
		}
		return true, buf, nil
	}
	return true, nil, apiError(wire.CodeProtocol, "host %s answered with an unknown message kind %q", hostName, m.Header.Get(kindHeader))
}

// silence is how long a request to host may go without a message.
func (c *Client) silence(hostName string) time.Duration {
	alive := DefaultAlive
	if p, ok := c.dir.presence(hostName); ok && p.AliveMS > 0 {
		alive = time.Duration(p.AliveMS) * time.Millisecond
	}
	return missedAlive*alive + aliveSlack
}

// cancelRemote asks host to stop working on the request answered on reply.
func (c *Client) cancelRemote(hostName, reply string) {
	body, _ := json.Marshal(request{Reply: reply})
	c.nc.Publish(c.subj.op(hostName, opCancel, ""), body) // best effort: the host's work ends with its own timeout otherwise
}

// roundTrip is exchange with the answer decoded into out, and every failure mapped to the
// error a Backend returns.
func (c *Client) roundTrip(ctx context.Context, hostName, subject string, req, out any, progress func(hostapi.Progress)) error {
	data, err := c.exchange(ctx, hostName, subject, req, progress)
	if err != nil {
		return c.backendError(err)
	}
	if err := wire.Unmarshal(data, out); err != nil {
		return apiError(wire.CodeProtocol, "host %s sent an unreadable answer: %v", hostName, err)
	}
	return nil
}

// backendError maps the failures of an exchange to what a Backend returns.
func (c *Client) backendError(err error) error {
	var eb *errorBody
	var pe *permissionError
	switch {
	case errors.As(err, &eb):
		return fromBody(eb)
	case errors.As(err, &pe):
		return apiError(wire.CodePermissionDenied, "%s", pe.Error())
	}
	return err
}
