package transport

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordingConn keeps what is written to it until it is closed.
type recordingConn struct {
	net.Conn // nil: only Write, SetWriteDeadline and Close are called
	out      []byte
	writes   int
	closed   bool
}

func (r *recordingConn) Write(p []byte) (int, error) {
	if r.closed {
		return 0, net.ErrClosed
	}
	r.out = append(r.out, p...)
	r.writes++
	return len(p), nil
}

func (r *recordingConn) SetWriteDeadline(time.Time) error { return nil }

func (r *recordingConn) Close() error { r.closed = true; return nil }

// Closing the socket sends what is corked first, and nothing is corked after: the library
// closes it right after the close frame that answers the peer's, which two writers on
// their way may have corked.
func TestCombinerCloseSendsCorked(t *testing.T) {
	rec := &recordingConn{}
	c := &combiner{Conn: rec}
	c.enter()
	c.enter()
	if _, err := c.Write([]byte("message")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("close frame")); err != nil {
		t.Fatal(err)
	}
	if len(rec.out) != 0 {
		t.Fatal("two messages on their way, and a frame was not corked")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if string(rec.out) != "messageclose frame" || !rec.closed {
		t.Fatalf("closed with %q sent, want what was corked", rec.out)
	}
	if _, err := c.Write([]byte("late")); err == nil {
		t.Fatal("a frame written after Close was corked, not failed")
	}
	for range 2 {
		if err := c.leave(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(rec.out) != len("messageclose frame") {
		t.Fatal("something was left corked after Close")
	}
	if c.pooled != nil || c.buf != nil {
		t.Fatal("a closed connection still holds its buffer")
	}
}

// The peer's close is answered even while messages are being written: the answer, which
// may be corked behind them, reaches the peer before the socket is closed, so its Close
// completes the handshake as over the plain path.
func TestCombinedPeerCloseAnswered(t *testing.T) {
	for i := range 20 {
		client, server, _ := wirePair(t)
		go func() { // the server reads, to see the close
			for {
				if _, _, err := server.Read(context.Background()); err != nil {
					return
				}
			}
		}()
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for server.Write(context.Background(), MessageText, []byte("tick")) == nil {
				}
			})
		}
		go func() { // the client reads until the close
			for {
				if _, _, err := client.Read(context.Background()); err != nil {
					return
				}
			}
		}()
		for range 50 {
			runtime.Gosched()
		}
		if err := client.Close(StatusNormalClosure, "bye"); err != nil {
			t.Fatalf("round %d: the client's close: %v", i, err)
		}
		wg.Wait()
	}
}

// FuzzCombiner drives a combiner as the WebSocket library and wsConn.Write drive it —
// messages entering, writing their frames one at a time (the library's lock), giving up,
// leaving; control frames written between them — in the order the input says, and checks
// it against the plain path after every step: the bytes sent and those corked are exactly
// the frames written so far, in order; nothing stays corked once no message is on its way;
// a frame written with no other message on its way goes out at once.
func FuzzCombiner(f *testing.F) {
	f.Add([]byte{0, 0, 0})                                                 // a lone message: enters, writes, leaves
	f.Add([]byte{0, 0x30, 0, 0x31, 0})                                     // a control frame beside one message, and alone
	f.Add([]byte{0, 1, 0, 9, 0, 0, 1, 0x38})                               // one gives up after the other corked
	f.Add([]byte{0, 1, 0, 0xE5, 0, 1})                                     // a frame beyond what is corked, after a corked one
	f.Add([]byte{0, 1, 0xC4, 0xC5})                                        // two mid-sized frames
	f.Add([]byte{0, 1, 2, 0xC6})                                           // a frame above corkFrame, within corkLimit
	f.Add(append([]byte{0, 1, 2}, bytes.Repeat([]byte{0xC4, 0, 0}, 7)...)) // corked up to the limit
	f.Add([]byte{0, 1, 0, 1, 4, 5, 4, 5})
	f.Add([]byte{0, 1, 2, 0, 1, 2, 0, 1, 2, 3, 8, 9, 10})
	f.Add([]byte{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 200, 201, 202, 203})
	f.Add(bytes.Repeat([]byte{0, 1, 2, 3, 252, 253, 254, 255}, 20))
	f.Fuzz(func(t *testing.T, ops []byte) {
		rec := &recordingConn{}
		c := &combiner{Conn: rec}
		const writers = 4
		var stage [writers]int // 0 idle, 1 entered, 2 wrote
		var want []byte
		on := 0 // messages on their way
		frame := func(size int) []byte {
			b := make([]byte, size)
			for i := range b {
				b[i] = byte(len(want) + i)
			}
			return b
		}
		// write writes p as the library does, and checks it went out at once when it must.
		write := func(i int, p []byte, atOnce bool, what string) {
			want = append(want, p...)
			if _, err := c.Write(p); err != nil {
				t.Fatal(err)
			}
			if atOnce && len(c.buf) != 0 {
				t.Fatalf("op %d: %s (%d bytes) was corked", i, what, len(p))
			}
		}
		leave := func() {
			on--
			if err := c.leave(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
		}
		for i, op := range ops {
			w := int(op % writers)
			size := 1 + int(op)*13%600
			if op >= 192 { // a large frame, sometimes beyond what is corked
				size = 1 + int(op-192)*700
			}
			switch {
			case op&0x30 == 0x30: // a control frame (a ping, a pong): written without entering
				write(i, frame(size%126), on == 0, "a control frame with no message on its way")
			case stage[w] == 0:
				c.enter()
				on++
				stage[w] = 1
			case stage[w] == 1 && op&0x08 != 0: // gives up waiting for the library's lock
				leave()
				stage[w] = 0
			case stage[w] == 1:
				write(i, frame(size), on == 1 || size > corkFrame, "the only message on its way or a frame above corkFrame")
				stage[w] = 2
			default:
				leave()
				stage[w] = 0
			}
			if got := append(bytes.Clone(rec.out), c.buf...); !bytes.Equal(got, want) {
				t.Fatalf("op %d: sent and corked %d bytes, want the %d written, in order", i, len(got), len(want))
			}
			if s := c.state.Load(); int(s>>1) != on || (s&corked != 0) != (len(c.buf) > 0) {
				t.Fatalf("op %d: state %d with %d on their way and %d bytes corked", i, s, on, len(c.buf))
			}
			if on == 0 && len(c.buf) != 0 {
				t.Fatalf("op %d: %d bytes corked with no message on its way", i, len(c.buf))
			}
			if len(c.buf) > corkLimit {
				t.Fatalf("op %d: %d bytes corked, above the limit", i, len(c.buf))
			}
			if (c.pooled != nil) != (len(c.buf) > 0) {
				t.Fatalf("op %d: %d bytes corked, holding a pooled buffer: %v", i, len(c.buf), c.pooled != nil)
			}
		}
		for w := range stage {
			if stage[w] != 0 {
				leave()
			}
		}
		if !bytes.Equal(rec.out, want) || len(c.buf) != 0 {
			t.Fatalf("at the end: sent %d bytes with %d corked, want the %d written", len(rec.out), len(c.buf), len(want))
		}
	})
}

// readRecorder keeps what is read from the socket under it: the bytes on the wire.
type readRecorder struct {
	net.Conn
	mu sync.Mutex
	in []byte
}

func (r *readRecorder) Read(p []byte) (int, error) {
	n, err := r.Conn.Read(p)
	r.mu.Lock()
	r.in = append(r.in, p[:n]...)
	r.mu.Unlock()
	return n, err
}

// wire returns what was read after the upgrade's response.
func (r *readRecorder) wire(t *testing.T) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := bytes.Index(r.in, []byte("\r\n\r\n"))
	if i < 0 {
		t.Fatal("no upgrade response on the wire")
	}
	return bytes.Clone(r.in[i+4:])
}

// wirePair is a loopback connection whose client records the bytes the server sent.
func wirePair(t *testing.T) (client, server Conn, rec *readRecorder) {
	t.Helper()
	conns := make(chan Conn, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := Accept(w, r, AcceptOptions{})
		if err != nil {
			t.Error(err)
			return
		}
		conns <- c
	}))
	t.Cleanup(srv.Close)
	rec = &readRecorder{}
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		rec.Conn = c
		return rec, err
	}}}
	client, err := Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"), DialOptions{HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	server = <-conns
	t.Cleanup(func() { _ = Abort(client); _ = Abort(server) }) // nobody reads to answer a close
	return client, server, rec
}

// received is a message a reading goroutine read.
type received struct {
	typ MessageType
	b   []byte
}

// reading reads c in a goroutine of its own until c fails, which it does when the test
// aborts it, and hands over the messages: so that the connection answers pings and sees
// pongs while the test writes.
func reading(t *testing.T, c Conn) <-chan received {
	msgs := make(chan received)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			typ, b, err := c.Read(context.Background())
			if err != nil {
				return
			}
			msgs <- received{typ, b}
		}
	}()
	t.Cleanup(func() { _ = Abort(c); <-done })
	return msgs
}

// typeOf is the type a test message is sent as: text for some sizes, binary for others.
func typeOf(b []byte) MessageType {
	if len(b)%3 == 0 {
		return MessageText
	}
	return MessageBinary
}

// sendConcurrently writes msgs[g] from goroutine g on from, while another goroutine
// pings (pings times; nil: none), and takes them all from to, what the peer read; it
// checks each goroutine's messages arrive whole, with their type and in its order, and
// returns them in the order they arrived.
func sendConcurrently(t *testing.T, from Conn, to <-chan received, msgs [][][]byte, pings int, ping func() error) [][]byte {
	t.Helper()
	total := 0
	for _, m := range msgs {
		total += len(m)
	}
	var wg sync.WaitGroup
	for _, m := range msgs {
		wg.Go(func() {
			for _, b := range m {
				if err := from.Write(context.Background(), typeOf(b), b); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	if ping != nil {
		wg.Go(func() {
			for range pings {
				if err := ping(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	var got [][]byte
	next := make([]int, len(msgs))
	for range total {
		m, ok := <-to
		if !ok {
			t.Fatal("the peer stopped reading")
		}
		b := m.b
		g := int(b[0])
		if g >= len(msgs) || next[g] >= len(msgs[g]) || !bytes.Equal(b, msgs[g][next[g]]) || m.typ != typeOf(b) {
			t.Fatalf("message %d: %d bytes (%v) from writer %d, not the next one it wrote", len(got), len(b), m.typ, g)
		}
		next[g]++
		got = append(got, b)
	}
	wg.Wait()
	checkNothingCorked(t, from)
	return got
}

// dataFrames splits what a server sent into frames and returns the data frames, joined,
// and how many control frames were among them: a frame torn or cut short by corking fails.
func dataFrames(t *testing.T, wire []byte) (data []byte, control int) {
	t.Helper()
	for len(wire) > 0 {
		if len(wire) < 2 || wire[1]&0x80 != 0 {
			t.Fatalf("%d bytes left on the wire, not a server's frame header", len(wire))
		}
		n, h := int(wire[1]&0x7f), 2
		switch n {
		case 126:
			n, h = int(binary.BigEndian.Uint16(wire[2:])), 4
		case 127:
			n, h = int(binary.BigEndian.Uint64(wire[2:])), 10
		}
		if len(wire) < h+n {
			t.Fatalf("a %d-byte frame with %d bytes left on the wire", n, len(wire)-h)
		}
		if wire[0]&0x0f >= 8 {
			control++
		} else {
			data = append(data, wire[:h+n]...)
		}
		wire = wire[h+n:]
	}
	return data, control
}

// checkNothingCorked fails when c's combiner holds bytes with no write on its way.
func checkNothingCorked(t *testing.T, c Conn) {
	t.Helper()
	if comb := c.(*wsConn).comb; comb != nil {
		comb.mu.Lock()
		s, n := comb.state.Load(), len(comb.buf)
		comb.mu.Unlock()
		if s != 0 || n != 0 {
			t.Fatalf("no write on its way, and the combiner's state is %d with %d bytes corked", s, n)
		}
	}
}

// Bursts of writes that end together: once every Write has returned, all the bursts'
// messages are on the wire (the last writer to leave sends what the others corked), and
// nothing stays corked.
func TestCombinedBursts(t *testing.T) {
	client, server, _ := wirePair(t)
	in := reading(t, client)
	for i := range 300 {
		msgs := messages(3, []byte{byte(i), byte(i * 7), byte(i * 13)})
		sendConcurrently(t, server, in, msgs, 0, nil)
	}
}

// checkCombinedWire writes msgs from concurrent goroutines on a combining connection, both
// ways, the server pinging the client pings times meanwhile (the pings, and the pongs
// answering the client's, are control frames written between the messages); then the
// messages as the client received them, one after the other, on a plain connection. It
// checks that the server sent the same data frames, byte for byte, on both, and that the
// combining connection closes with the handshake.
func checkCombinedWire(t *testing.T, msgs [][][]byte, pings int) {
	client, server, rec := wirePair(t)
	if server.(*wsConn).comb == nil || client.(*wsConn).comb == nil {
		t.Fatal("the connections do not combine their writes")
	}
	toClient, toServer := reading(t, client), reading(t, server)
	ping := func(c Conn) func() error {
		return func() error { return c.(*wsConn).ws.Ping(context.Background()) }
	}
	received := sendConcurrently(t, server, toClient, msgs, pings, ping(server))
	sendConcurrently(t, client, toServer, msgs, pings, ping(client)) // masked: checked by content and order
	if err := server.Close(StatusNormalClosure, "done"); err != nil {
		t.Fatalf("close after combined writes: %v", err)
	}
	combined, control := dataFrames(t, rec.wire(t))
	if control < pings+1 { // its pings, its pongs to the client's, its close
		t.Fatalf("%d control frames on the wire, want at least %d", control, pings+1)
	}

	combineWrites = false
	defer func() { combineWrites = true }()
	client, server, rec = wirePair(t)
	if server.(*wsConn).comb != nil || client.(*wsConn).comb != nil {
		t.Fatal("combining not turned off")
	}
	for _, b := range received {
		mustWrite(t, server, typeOf(b), b)
		mustRead(t, client, typeOf(b), b)
	}
	if plain, _ := dataFrames(t, rec.wire(t)); !bytes.Equal(combined, plain) {
		t.Fatalf("combined writes put %d bytes of data frames on the wire, the plain path %d for the same messages", len(combined), len(plain))
	}
}

// messages makes writers lists of messages whose sizes come from sizes; each message
// starts with its writer's number.
func messages(writers int, sizes []byte) [][][]byte {
	msgs := make([][][]byte, writers)
	for i, s := range sizes {
		n := 1 + int(s)*7
		if s >= 240 {
			n = int(s-239) * 3000 // up to 48 KB: beyond what is corked
		}
		b := bytes.Repeat([]byte(fmt.Sprint(i)), n)[:n]
		b[0] = byte(i % writers)
		msgs[i%writers] = append(msgs[i%writers], b)
	}
	return msgs
}

func TestCombinedWireMatchesPlain(t *testing.T) {
	sizes := make([]byte, 400)
	for i := range sizes {
		sizes[i] = byte(i * 37)
	}
	checkCombinedWire(t, messages(8, sizes), 20)
}

// FuzzCombinedWire is checkCombinedWire on random writers, sizes and pings: the same
// messages, sent concurrently through the combining path and one by one through the plain
// one, put the same data frames on the wire.
func FuzzCombinedWire(f *testing.F) {
	f.Add(uint8(2), uint8(0), []byte{1, 2, 3, 4, 5, 6})
	f.Add(uint8(8), uint8(5), []byte{40, 250, 3, 255, 0, 0, 0, 0, 9, 9, 9, 9, 9, 9, 9})
	f.Add(uint8(1), uint8(3), []byte{7, 7, 7})
	f.Fuzz(func(t *testing.T, writers, pings uint8, sizes []byte) {
		if writers == 0 || writers > 16 || len(sizes) == 0 || len(sizes) > 200 || pings > 20 {
			t.Skip()
		}
		checkCombinedWire(t, messages(int(writers), sizes), int(pings))
	})
}

// echoOnce is a server that echoes one message on each WebSocket it accepts.
func echoOnce(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := Accept(w, r, AcceptOptions{})
		if err != nil {
			return
		}
		defer c.Close(StatusNormalClosure, "")
		if typ, b, err := c.Read(context.Background()); err == nil {
			_ = c.Write(context.Background(), typ, b)
		}
		_, _, _ = c.Read(context.Background())
	}))
	t.Cleanup(srv.Close)
	return srv
}

// checkDialsPlain dials url with opts and checks the connection works, written plainly.
func checkDialsPlain(t *testing.T, url string, opts DialOptions, why string) {
	t.Helper()
	c, err := Dial(context.Background(), "ws"+strings.TrimPrefix(url, "http"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(StatusNormalClosure, "")
	if c.(*wsConn).comb != nil {
		t.Fatal(why)
	}
	mustWrite(t, c, MessageText, []byte("hello"))
	mustRead(t, c, MessageText, []byte("hello"))
}

// A transport that is not an *http.Transport still dials: its connections are written
// plainly.
func TestDialOtherRoundTripper(t *testing.T) {
	rt := roundTripper{http.DefaultTransport}
	checkDialsPlain(t, echoOnce(t).URL, DialOptions{HTTPClient: &http.Client{Transport: rt}}, "combining under a transport it cannot dial for")
}

type roundTripper struct{ http.RoundTripper }

// closerFunc is a ws for combiner.leave: what tears the connection down.
type closerFunc func() error

func (f closerFunc) CloseNow() error { return f() }

// The last writer's send of what others corked is bounded by its context, as the library
// bounds its own writes: a peer that does not read holds it until the context ends, which
// tears the connection down, and Write reports the context's error.
func TestCombinerLeaveBoundedByContext(t *testing.T) {
	conn, peer := net.Pipe() // nobody reads peer: a write blocks
	defer peer.Close()
	c := &combiner{Conn: conn}
	c.enter()
	c.enter()
	if _, err := c.Write([]byte("corked")); err != nil {
		t.Fatal(err)
	}
	if err := c.leave(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	torn := false
	err := c.leave(ctx, closerFunc(func() error { torn = true; return conn.Close() }))
	if err != context.Canceled || !torn {
		t.Fatalf("leave with an ended context and a peer that does not read: %v (torn down: %v), want context.Canceled", err, torn)
	}
}

// A dial redirected to another server dials twice: which connection carries the WebSocket
// is not known, and it is written plainly.
func TestDialRedirectedPlain(t *testing.T) {
	echo := echoOnce(t)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, echo.URL, http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	checkDialsPlain(t, redirect.URL, DialOptions{}, "a redirected dial combines through one of its two connections")
}
