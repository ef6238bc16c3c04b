package tools

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// msg is one message the fake app sends.
type msg struct {
	typ  transport.MessageType
	data []byte
}

// handler answers one request of the fake app with any number of messages.
type handler func(req *wire.Envelope) []msg

// harness wires a Client to a hand-written fake app over transport.Pipe. The host side
// runs the reader loop a host session would: every message goes to HandleMessage, a read
// error closes the client.
type harness struct {
	t      testing.TB
	c      *Client
	host   transport.Conn
	app    transport.Conn
	handle atomic.Pointer[handler]

	mu        sync.Mutex
	requests  []*wire.Envelope
	raw       [][]byte
	unclaimed int

	wg sync.WaitGroup
}

// newHarness starts the harness and opens the client.
func newHarness(t testing.TB, opts Options, h handler) *harness {
	t.Helper()
	hs := startHarness(t, opts, h)
	hs.c.Open()
	return hs
}

// startHarness starts the harness without opening the client.
func startHarness(t testing.TB, opts Options, h handler) *harness {
	t.Helper()
	if opts.ArtifactDir == "" {
		opts.ArtifactDir = t.TempDir()
	}
	hostEnd, appEnd := transport.Pipe(transport.PipeOptions{})
	hs := &harness{t: t, host: hostEnd, app: appEnd}
	hs.handle.Store(&h)
	hs.c = NewClient(hostEnd, opts)
	ctx := context.Background()
	hs.wg.Add(2)
	go func() { // host reader
		defer hs.wg.Done()
		for {
			typ, data, err := hostEnd.Read(ctx)
			if err != nil {
				hs.c.Close(err)
				return
			}
			if !hs.c.HandleMessage(typ, data) {
				hs.mu.Lock()
				hs.unclaimed++
				hs.mu.Unlock()
			}
		}
	}()
	go func() { // fake app
		defer hs.wg.Done()
		for {
			_, data, err := appEnd.Read(ctx)
			if err != nil {
				return
			}
			env, err := wire.DecodeEnvelope(data)
			if err != nil {
				t.Errorf("app: bad request: %v\n%s", err, data)
				continue
			}
			hs.mu.Lock()
			hs.requests = append(hs.requests, &env)
			hs.raw = append(hs.raw, data)
			hs.mu.Unlock()
			for _, m := range (*hs.handle.Load())(&env) {
				if m.typ == dropConnection {
					appEnd.Close(transport.StatusGoingAway, "app gone")
					return
				}
				if err := appEnd.Write(ctx, m.typ, m.data); err != nil {
					return
				}
			}
		}
	}()
	t.Cleanup(hs.stop)
	return hs
}

// stop drops the connection and waits for both loops.
func (hs *harness) stop() {
	hs.app.Close(transport.StatusNormalClosure, "")
	hs.host.Close(transport.StatusNormalClosure, "")
	hs.wg.Wait()
}

func (hs *harness) setHandler(h handler) { hs.handle.Store(&h) }

func (hs *harness) reqs() []*wire.Envelope {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return append([]*wire.Envelope(nil), hs.requests...)
}

// send writes a message from the app outside of any request.
func (hs *harness) send(m msg) {
	hs.t.Helper()
	if err := hs.app.Write(context.Background(), m.typ, m.data); err != nil {
		hs.t.Fatal(err)
	}
}

// reply builds a response envelope to req with payload (marshalled unless it is already
// JSON bytes).
func reply(t testing.TB, req *wire.Envelope, typ string, payload any) msg {
	t.Helper()
	var raw jsontext.Value
	switch p := payload.(type) {
	case string:
		raw = jsontext.Value(p)
	case []byte:
		raw = p
	case jsontext.Value:
		raw = p
	default:
		b, err := wire.Marshal(payload)
		if err != nil {
			t.Fatal(err)
		}
		raw = b
	}
	env := wire.NewResponse(req, typ, raw, time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC))
	data, err := wire.AppendEnvelope(nil, env)
	if err != nil {
		t.Fatal(err)
	}
	return msg{transport.MessageText, data}
}

// dropConnection as a msg type makes the fake app close the connection.
const dropConnection transport.MessageType = 0

func text(s string) msg { return msg{transport.MessageText, []byte(s)} }

// frame builds one ASFT frame by hand (56-byte little-endian header), independently of the
// wire package's encoder.
func frame(typ byte, id string, seq int32, off int64, payload []byte) msg {
	b := make([]byte, 56+len(payload))
	copy(b, "ASFT")
	b[4] = 1
	b[5] = typ
	copy(b[8:40], id)
	binary.LittleEndian.PutUint32(b[40:], uint32(seq))
	binary.LittleEndian.PutUint64(b[44:], uint64(off))
	binary.LittleEndian.PutUint32(b[52:], uint32(len(payload)))
	copy(b[56:], payload)
	return msg{transport.MessageBinary, b}
}

const (
	frameChunk    = 1
	frameComplete = 2
	frameError    = 3
)

// chunks returns the frames streaming data in pieces of size n, then complete.
func chunks(id string, data []byte, n int) []msg {
	var out []msg
	var seq int32
	var off int64
	for len(data) > 0 {
		k := min(n, len(data))
		out = append(out, frame(frameChunk, id, seq, off, data[:k]))
		data = data[k:]
		seq++
		off += int64(k)
	}
	return append(out, frame(frameComplete, id, seq, off, nil))
}

// errorsAs is errors.As with a typed result.
func errorsAs[T error](err error) (T, bool) {
	var target T
	ok := errors.As(err, &target)
	return target, ok
}
