package conformance

import (
	"bytes"
	"context"
	"errors"
	"sync"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// Message is one whole message the app wrote.
type Message struct {
	Type transport.MessageType
	Data []byte
}

// Target is the suite's raw channel to one app. The suite sends text messages exactly as
// it builds them and reads back every tool response and ASFT frame, in arrival order.
type Target interface {
	// SessionID is the logical session id the suite writes into requests' sessionId
	// ("" leaves it out).
	SessionID() string
	// Send writes one text message to the app.
	Send(ctx context.Context, msg []byte) error
	// Receive returns the next message from the app, waiting until one arrives or ctx
	// ends. It fails for good once the connection is gone.
	Receive(ctx context.Context) (Message, error)
}

// ErrTargetClosed is returned by Receive and Send after the target was closed.
var ErrTargetClosed = errors.New("conformance: target closed")

// DefaultInboxSize is how many received messages a target buffers before its feeder
// waits for the suite to read them.
const DefaultInboxSize = 256

// TapTarget is a Target over a connection that someone else reads: a host session, for
// one. The connection's reader hands each inbound message to Feed, which keeps the tool
// responses and ASFT frames for the suite and declines everything else (control
// traffic, telemetry), so that the reader can handle those as usual.
type TapTarget struct {
	sessionID string
	send      func(ctx context.Context, typ transport.MessageType, data []byte) error

	inbox     chan Message
	done      chan struct{}
	closeOnce sync.Once
	mu        sync.Mutex
	err       error // why the target ended
}

// NewTapTarget returns a TapTarget that writes requests with send and puts sessionID in
// them. Call Close when the suite is done: Feed then declines every message again.
func NewTapTarget(sessionID string, send func(ctx context.Context, typ transport.MessageType, data []byte) error) *TapTarget {
	return &TapTarget{
		sessionID: sessionID,
		send:      send,
		inbox:     make(chan Message, DefaultInboxSize),
		done:      make(chan struct{}),
	}
}

// SessionID implements Target.
func (t *TapTarget) SessionID() string { return t.sessionID }

// Send implements Target.
func (t *TapTarget) Send(ctx context.Context, msg []byte) error {
	select {
	case <-t.done:
		return t.cause()
	default:
	}
	return t.send(ctx, transport.MessageText, msg)
}

// Receive implements Target.
func (t *TapTarget) Receive(ctx context.Context) (Message, error) {
	select {
	case m := <-t.inbox:
		return m, nil
	default:
	}
	select {
	case m := <-t.inbox:
		return m, nil
	case <-t.done:
		return Message{}, t.cause()
	case <-ctx.Done():
		return Message{}, ctx.Err()
	}
}

// Feed offers one inbound message to the suite and reports whether the suite took it:
// binary ASFT frames and text messages that are (or try to be) tool responses are
// taken; anything else is left to the caller. A taken message is queued; when the
// queue is full Feed waits for the suite to read, which slows the connection's reader
// down rather than growing memory. data is copied.
func (t *TapTarget) Feed(typ transport.MessageType, data []byte) bool {
	if !isSuiteTraffic(typ, data) {
		return false
	}
	m := Message{Type: typ, Data: bytes.Clone(data)}
	select {
	case <-t.done:
		return false
	default:
	}
	select {
	case t.inbox <- m:
		return true
	case <-t.done:
		return false
	}
}

// Close ends the target: pending and later Receive and Send calls fail with
// ErrTargetClosed and Feed declines every message.
func (t *TapTarget) Close() { t.end(ErrTargetClosed) }

func (t *TapTarget) end(err error) {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		t.err = err
		t.mu.Unlock()
		close(t.done)
	})
}

func (t *TapTarget) cause() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// isSuiteTraffic tells the suite's messages from the rest of a session's traffic:
// ASFT frames, and text messages that decode as tool responses or, failing to decode,
// mention a tool type and are not control messages (a malformed response is still the
// suite's business).
func isSuiteTraffic(typ transport.MessageType, data []byte) bool {
	if typ == transport.MessageBinary {
		return wire.IsASFT(data)
	}
	if typ != transport.MessageText {
		return false
	}
	env, err := wire.DecodeEnvelope(data)
	if err == nil {
		return wire.IsResponse(env.Type)
	}
	return bytes.Contains(data, []byte(`"tool.`)) && !bytes.Contains(data, []byte(`"CONTROL_`))
}

// ConnTarget is a Target over a transport.Conn whose other end is the app. It owns the
// connection's reading: one goroutine reads until Close.
type ConnTarget struct {
	*TapTarget
	conn transport.Conn
	wg   sync.WaitGroup
}

// NewConnTarget starts reading conn and returns the target. Messages that are not the
// suite's (see TapTarget.Feed) are dropped. Close closes conn and waits for the reader.
func NewConnTarget(conn transport.Conn, sessionID string) *ConnTarget {
	t := &ConnTarget{TapTarget: NewTapTarget(sessionID, conn.Write), conn: conn}
	t.wg.Add(1)
	go t.read()
	return t
}

func (t *ConnTarget) read() {
	defer t.wg.Done()
	for {
		typ, data, err := t.conn.Read(context.Background())
		if err != nil {
			t.end(err)
			return
		}
		t.Feed(typ, data)
	}
}

// Close closes the connection (status 1000) and waits for the reader to stop.
func (t *ConnTarget) Close() {
	t.conn.Close(transport.StatusNormalClosure, "conformance run complete")
	t.wg.Wait()
	t.TapTarget.Close()
}
