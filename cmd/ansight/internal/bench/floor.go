package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/ansight-go/ansight/transport"
)

// The floor is what a call cannot cost less than on this machine: the exact bytes of the
// call and of its answer, as the host and the app wrote them, echoed over one loopback
// WebSocket connection by coder/websocket used directly, in the protocol's direction (the
// accepting end sends the requests, as the host does, and the dialling end answers them,
// as an app does), with a reader that matches every answer to its caller by the id in it,
// and without a single allocation per exchange. No envelope is decoded, no JSON read or
// written, no schema checked, no handler run: what is left is framing, the socket's system
// calls and the hand-off between goroutines, which every call pays too. The floor makes
// one write system call per message, as the library does; package transport combines
// concurrent writes into fewer (see its doc), so at 8 callers a call costs less CPU than
// its floor (cpu-ratio below 1), and at 1 caller, where nothing is combined, it does not.
//
// The older echo (baseline.go) makes what a protocol client must make per request (an id
// string, the message read into a new slice: 7 allocations) over package transport, with
// the sizes of the messages rather than their bytes; it is reported beside the floor for
// one release so that this round's ratios can be set against the last.

// exchange is one request and its answer, as bytes, and where the id that correlates them
// sits in each: the request's envelope id and the answer's replyTo.
type exchange struct {
	request, answer []byte
	reqID, ansID    int // offsets of the id in request and answer
	idLen           int
}

// maxFloorID is the longest request id the floor correlates (the host's are 32 hex digits).
const maxFloorID = 64

type floorID [maxFloorID]byte

// newExchange finds id in request (its first occurrence) and in answer (its first
// occurrence after `"replyTo":`) and returns the pair.
func newExchange(request, answer []byte, id string) (*exchange, error) {
	if len(id) == 0 || len(id) > maxFloorID {
		return nil, fmt.Errorf("bench: floor: request id %q is empty or longer than %d bytes", id, maxFloorID)
	}
	reqID := bytes.Index(request, []byte(`"`+id+`"`))
	at := bytes.Index(answer, []byte(`"replyTo":"`+id+`"`))
	if reqID < 0 || at < 0 {
		return nil, fmt.Errorf("bench: floor: the request or its answer does not carry id %q", id)
	}
	return &exchange{request: bytes.Clone(request), answer: bytes.Clone(answer),
		reqID: reqID + 1, ansID: at + len(`"replyTo":"`), idLen: len(id)}, nil
}

// floor is the requesting end of the floor's connection, with the answering end it dialled.
type floor struct {
	srv    *http.Server
	ln     net.Listener
	server *websocket.Conn // requests are written here, answers read
	client *websocket.Conn // requests are read here, answers written
	wg     sync.WaitGroup

	ex      atomic.Pointer[exchange] // what is being echoed
	counter atomic.Uint64            // request ids
	bufs    sync.Pool                // *[]byte request buffers, one per caller in flight
	spare   chan chan struct{}       // answered requests' channels

	mu      sync.Mutex
	pending map[floorID]chan struct{}
	err     error         // why the reader stopped
	done    chan struct{} // closed when the reader stops
}

// startFloor listens on loopback, dials itself and starts the reader and the answerer.
func startFloor(ctx context.Context) (*floor, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bench: floor listener: %w", err)
	}
	f := &floor{ln: ln, spare: make(chan chan struct{}, 64), pending: map[floorID]chan struct{}{}, done: make(chan struct{})}
	f.bufs.New = func() any { return new([]byte) }
	accepted := make(chan *websocket.Conn, 1)
	f.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		ws.SetReadLimit(transport.DefaultReadLimit)
		accepted <- ws
	})}
	f.wg.Go(func() { _ = f.srv.Serve(ln) })
	client, _, err := websocket.Dial(ctx, "ws://"+ln.Addr().String()+"/", nil)
	if err != nil {
		f.srv.Close()
		f.wg.Wait()
		return nil, fmt.Errorf("bench: floor dial: %w", err)
	}
	client.SetReadLimit(transport.DefaultReadLimit)
	select {
	case f.server = <-accepted:
	case <-ctx.Done():
		client.CloseNow()
		f.srv.Close()
		f.wg.Wait()
		return nil, ctx.Err()
	}
	f.client = client
	f.wg.Go(f.answer)
	go f.read()
	return f, nil
}

// close ends the connection and waits for both ends' goroutines.
func (f *floor) close() {
	_ = f.server.CloseNow()
	_ = f.client.CloseNow()
	<-f.done
	_ = f.srv.Close()
	f.wg.Wait()
}

// readInto reads one whole message into *buf, grown as needed, and returns it.
func readInto(ws *websocket.Conn, buf *[]byte) (websocket.MessageType, []byte, error) {
	typ, r, err := ws.Reader(context.Background())
	if err != nil {
		return 0, nil, err
	}
	b := (*buf)[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			*buf = b
			return typ, b, nil
		}
		if err != nil {
			return 0, nil, err
		}
	}
}

// answer is the app's end: it reads each request, copies its id into the answer's replyTo
// and writes the answer, from the reader, as an app's leader answers what it read.
func (f *floor) answer() {
	var in []byte
	for {
		_, msg, err := readInto(f.client, &in)
		if err != nil {
			return
		}
		ex := f.ex.Load()
		if ex == nil || len(msg) < ex.reqID+ex.idLen {
			return
		}
		copy(ex.answer[ex.ansID:ex.ansID+ex.idLen], msg[ex.reqID:])
		if f.client.Write(context.Background(), websocket.MessageText, ex.answer) != nil {
			return
		}
	}
}

// read is the host's end: it matches every answer to the request waiting for it.
func (f *floor) read() {
	defer close(f.done)
	var in []byte
	for {
		_, msg, err := readInto(f.server, &in)
		ex := f.ex.Load()
		if err == nil && (ex == nil || len(msg) < ex.ansID+ex.idLen) {
			err = errors.New("bench: floor: an answer without its id")
		}
		if err != nil {
			f.mu.Lock()
			f.err = err
			f.mu.Unlock()
			return
		}
		var id floorID
		copy(id[:], msg[ex.ansID:ex.ansID+ex.idLen])
		f.mu.Lock()
		ch := f.pending[id]
		delete(f.pending, id)
		f.mu.Unlock()
		if ch != nil {
			ch <- struct{}{}
		}
	}
}

// roundTrip sends ex's request with a new id and waits for its answer. Concurrent round
// trips must echo the same exchange: the answerer answers with the one last sent.
func (f *floor) roundTrip(ctx context.Context, ex *exchange) error {
	if f.ex.Load() != ex {
		f.ex.Store(ex)
	}
	buf := f.bufs.Get().(*[]byte)
	defer f.bufs.Put(buf)
	msg := append((*buf)[:0], ex.request...)
	*buf = msg
	// A new id per request: the counter in hex, zero-padded to the template id's length.
	var id floorID
	idb := msg[ex.reqID : ex.reqID+ex.idLen]
	for i, v := len(idb)-1, f.counter.Add(1); i >= 0; i, v = i-1, v>>4 {
		idb[i] = "0123456789abcdef"[v&15]
	}
	copy(id[:], idb)
	var ch chan struct{}
	select {
	case ch = <-f.spare:
	default:
		ch = make(chan struct{}, 1)
	}
	f.mu.Lock()
	f.pending[id] = ch
	f.mu.Unlock()
	// Written with a context that never ends, as the host's client writes: one that can end
	// costs coder/websocket a context.AfterFunc per write.
	if err := f.server.Write(context.Background(), websocket.MessageText, msg); err != nil {
		return fmt.Errorf("bench: floor write: %w", err)
	}
	select {
	case <-ch:
		select { // answered: ch is empty and unreferenced again
		case f.spare <- ch:
		default:
		}
		return nil
	case <-f.done:
		f.mu.Lock()
		defer f.mu.Unlock()
		return fmt.Errorf("bench: floor connection: %w", f.err)
	case <-ctx.Done():
		return ctx.Err()
	}
}
