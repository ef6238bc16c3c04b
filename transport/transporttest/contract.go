package transporttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/ansight-go/ansight/transport"
)

// NewPairFunc makes the two ends of a connection whose readers accept messages up to
// readLimit bytes (the implementation's default when zero). It registers the pair's teardown
// with t.Cleanup.
type NewPairFunc func(t *testing.T, readLimit int64) (a, b transport.Conn)

// RunConnTests checks, as subtests of t, the behaviour the transport.Conn contract promises:
// whole messages in order both ways, copied writes, message types, close codes and reasons
// seen by the peer on Read and Write, ErrClosed on the closing side, messages written before
// a close delivered before it, Abort, read limits (StatusMessageTooBig on both sides),
// context cancellation, and concurrent writers never interleaving. Run it against every
// implementation and every wrapper that claims to be transparent.
func RunConnTests(t *testing.T, newPair NewPairFunc) {
	t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, newPair) })
	t.Run("WriteCopies", func(t *testing.T) { testWriteCopies(t, newPair) })
	t.Run("InvalidType", func(t *testing.T) { testInvalidType(t, newPair) })
	t.Run("CloseCodes", func(t *testing.T) { testCloseCodes(t, newPair) })
	t.Run("CloseAfterWrites", func(t *testing.T) { testCloseAfterWrites(t, newPair) })
	t.Run("CloseTwice", func(t *testing.T) { testCloseTwice(t, newPair) })
	t.Run("CloseUnblocksRead", func(t *testing.T) { testCloseUnblocksRead(t, newPair) })
	t.Run("CloseArgs", func(t *testing.T) { testCloseArgs(t, newPair) })
	t.Run("Abort", func(t *testing.T) { testAbort(t, newPair) })
	t.Run("ReadContext", func(t *testing.T) { testReadContext(t, newPair) })
	t.Run("ReadLimit", func(t *testing.T) { testReadLimit(t, newPair) })
	t.Run("ConcurrentWriters", func(t *testing.T) { testConcurrentWriters(t, newPair) })
	t.Run("ReadBuffer", func(t *testing.T) { testReadBuffer(t, newPair) })
}

func mustWrite(t *testing.T, c transport.Conn, typ transport.MessageType, data []byte) {
	t.Helper()
	if err := c.Write(context.Background(), typ, data); err != nil {
		t.Fatalf("Write(%v, %d bytes): %v", typ, len(data), err)
	}
}

func mustRead(t *testing.T, c transport.Conn, wantType transport.MessageType, want []byte) {
	t.Helper()
	typ, got, err := c.Read(context.Background())
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if typ != wantType || !bytes.Equal(got, want) {
		t.Fatalf("Read = %v %q, want %v %q", typ, abbrev(got), wantType, abbrev(want))
	}
}

func abbrev(b []byte) string {
	if len(b) > 40 {
		return fmt.Sprintf("%s…(%d bytes)", b[:40], len(b))
	}
	return string(b)
}

// wantClose reads from c until an error and checks it is a *transport.CloseError with code (and reason,
// when reason is not "*").
func wantClose(t *testing.T, c transport.Conn, code transport.StatusCode, reason string) {
	t.Helper()
	_, _, err := c.Read(context.Background())
	checkCloseError(t, err, code, reason)
}

func testRoundTrip(t *testing.T, newPair NewPairFunc) {
	a, b := newPair(t, 0)
	msgs := []struct {
		typ  transport.MessageType
		data []byte
	}{
		{transport.MessageText, []byte(`{"type":"tool.query"}`)},
		{transport.MessageBinary, []byte{'A', 'S', 'F', 'T', 1, 0, 0xff}},
		{transport.MessageText, []byte{}},
		{transport.MessageBinary, bytes.Repeat([]byte{7}, 512<<10+56)},
	}
	// Both ends write at once while the test reads: over a socket, big writes only finish
	// once the peer reads.
	var wg sync.WaitGroup
	for _, c := range []transport.Conn{a, b} {
		wg.Go(func() {
			for _, m := range msgs {
				if err := c.Write(context.Background(), m.typ, m.data); err != nil {
					t.Errorf("Write: %v", err)
					return
				}
			}
		})
	}
	for _, m := range msgs {
		mustRead(t, b, m.typ, m.data)
		mustRead(t, a, m.typ, m.data)
	}
	wg.Wait()
}

func testWriteCopies(t *testing.T, newPair NewPairFunc) {
	a, b := newPair(t, 0)
	buf := []byte("first")
	mustWrite(t, a, transport.MessageText, buf)
	copy(buf, "XXXXX")
	mustWrite(t, a, transport.MessageText, buf)
	mustRead(t, b, transport.MessageText, []byte("first"))
	mustRead(t, b, transport.MessageText, []byte("XXXXX"))
}

func testInvalidType(t *testing.T, newPair NewPairFunc) {
	a, b := newPair(t, 0)
	for _, typ := range []transport.MessageType{0, 3, 8, 9, -1} {
		if err := a.Write(context.Background(), typ, []byte("x")); err == nil {
			t.Errorf("Write(%v) succeeded", typ)
		}
	}
	// The connection is still usable.
	mustWrite(t, a, transport.MessageText, []byte("ok"))
	mustRead(t, b, transport.MessageText, []byte("ok"))
}

// readResult is one Read's outcome.
type readResult struct {
	typ  transport.MessageType
	data []byte
	err  error
}

// readAsync reads from c in the background until an error, sending every result (the error
// last). Over WebSocket a Close completes only when the peer's Read answers the close frame,
// as a connection's owner always does; tests read the same way.
func readAsync(c transport.Conn) <-chan readResult {
	out := make(chan readResult, 64)
	go func() {
		defer close(out)
		for {
			typ, data, err := c.Read(context.Background())
			out <- readResult{typ, data, err}
			if err != nil {
				return
			}
		}
	}()
	return out
}

// closeErr returns the error a background reader ended with, failing on any message.
func closeErr(t *testing.T, reads <-chan readResult) error {
	t.Helper()
	for r := range reads {
		if r.err != nil {
			return r.err
		}
		t.Fatalf("unexpected message %v %q", r.typ, abbrev(r.data))
	}
	t.Fatal("reader ended without an error")
	return nil
}

func checkCloseError(t *testing.T, err error, code transport.StatusCode, reason string) {
	t.Helper()
	ce, ok := errors.AsType[*transport.CloseError](err)
	if !ok {
		t.Fatalf("error = %v, want *transport.CloseError %d", err, code)
	}
	if ce.Code != code || (reason != "*" && ce.Reason != reason) {
		t.Fatalf("error = %+v, want code %d reason %q", ce, code, reason)
	}
}

func testCloseCodes(t *testing.T, newPair NewPairFunc) {
	tests := []struct {
		code   transport.StatusCode
		reason string
	}{
		{transport.StatusNormalClosure, ""},
		{transport.StatusGoingAway, "shutting down"},
		{transport.StatusPolicyViolation, "unauthorized"},
		{transport.StatusInternalError, "boom"},
		{4000, "private"},
	}
	for _, tt := range tests {
		for _, dir := range []string{"a→b", "b→a"} {
			t.Run(fmt.Sprintf("%d/%s", tt.code, dir), func(t *testing.T) {
				a, b := newPair(t, 0)
				if dir == "b→a" {
					a, b = b, a
				}
				reads := readAsync(b)
				if err := a.Close(tt.code, tt.reason); err != nil {
					t.Fatalf("Close: %v", err)
				}
				checkCloseError(t, closeErr(t, reads), tt.code, tt.reason)
				// The peer keeps reporting the close, on Read and on Write.
				wantClose(t, b, tt.code, tt.reason)
				if err := b.Write(context.Background(), transport.MessageText, []byte("late")); transport.CloseStatus(err) != tt.code {
					t.Errorf("peer Write after close = %v, want *transport.CloseError %d", err, tt.code)
				}
				// The closing side sees transport.ErrClosed.
				if _, _, err := a.Read(context.Background()); !errors.Is(err, transport.ErrClosed) || !errors.Is(err, net.ErrClosed) {
					t.Errorf("Read after Close = %v, want transport.ErrClosed", err)
				}
				if err := a.Write(context.Background(), transport.MessageText, []byte("x")); !errors.Is(err, transport.ErrClosed) {
					t.Errorf("Write after Close = %v, want transport.ErrClosed", err)
				}
			})
		}
	}
}

func testCloseAfterWrites(t *testing.T, newPair NewPairFunc) {
	a, b := newPair(t, 0)
	for i := range 5 {
		mustWrite(t, a, transport.MessageText, fmt.Appendf(nil, "m%d", i))
	}
	reads := readAsync(b)
	if err := a.Close(transport.StatusGoingAway, "bye"); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for i := range 5 {
		r := <-reads
		if want := fmt.Sprintf("m%d", i); r.err != nil || string(r.data) != want {
			t.Fatalf("read %d = %q, %v; want %q", i, r.data, r.err, want)
		}
	}
	checkCloseError(t, closeErr(t, reads), transport.StatusGoingAway, "bye")
}

func testCloseTwice(t *testing.T, newPair NewPairFunc) {
	a, b := newPair(t, 0)
	reads := readAsync(b)
	if err := a.Close(transport.StatusNormalClosure, ""); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	if err := a.Close(transport.StatusNormalClosure, ""); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("second Close = %v, want transport.ErrClosed", err)
	}
	checkCloseError(t, closeErr(t, reads), transport.StatusNormalClosure, "")
	// Closing after the peer closed is fine; from then on this side sees transport.ErrClosed.
	if err := b.Close(transport.StatusNormalClosure, ""); err != nil {
		t.Fatalf("Close after the peer's close: %v", err)
	}
	if _, _, err := b.Read(context.Background()); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("Read after own Close = %v, want transport.ErrClosed", err)
	}
}

func testCloseUnblocksRead(t *testing.T, newPair NewPairFunc) {
	a, b := newPair(t, 0)
	peer := readAsync(b)
	errc := make(chan error, 1)
	go func() {
		_, _, err := a.Read(context.Background())
		errc <- err
	}()
	// Whether Close lands before or during Read, the Read ends with transport.ErrClosed.
	a.Close(transport.StatusNormalClosure, "")
	if err := <-errc; !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("blocked Read = %v, want transport.ErrClosed", err)
	}
	checkCloseError(t, closeErr(t, peer), transport.StatusNormalClosure, "")
}

func testCloseArgs(t *testing.T, newPair NewPairFunc) {
	t.Run("UnsendableCode", func(t *testing.T) {
		a, b := newPair(t, 0)
		reads := readAsync(b)
		if err := a.Close(transport.StatusAbnormalClosure, "x"); err == nil {
			t.Error("Close(1006) returned nil, want an error")
		}
		checkCloseError(t, closeErr(t, reads), transport.StatusInternalError, "x")
	})
	t.Run("LongReason", func(t *testing.T) {
		a, b := newPair(t, 0)
		reads := readAsync(b)
		// 61 two-byte runes fill 122 of the 123 bytes; the 62nd must not be split.
		reason := strings.Repeat("é", 70)
		if err := a.Close(transport.StatusNormalClosure, reason); err != nil {
			t.Fatalf("Close: %v", err)
		}
		checkCloseError(t, closeErr(t, reads), transport.StatusNormalClosure, strings.Repeat("é", 61))
	})
}

func testAbort(t *testing.T, newPair NewPairFunc) {
	for _, dir := range []string{"a→b", "b→a"} {
		t.Run(dir, func(t *testing.T) {
			a, b := newPair(t, 0)
			if dir == "b→a" {
				a, b = b, a
			}
			// No reader on either side: transport.Abort does not wait for anyone.
			if err := transport.Abort(a); err != nil {
				t.Fatalf("transport.Abort: %v", err)
			}
			wantClose(t, b, transport.StatusAbnormalClosure, "*")
			if err := b.Write(context.Background(), transport.MessageText, []byte("x")); transport.CloseStatus(err) != transport.StatusAbnormalClosure {
				t.Errorf("peer Write after abort = %v, want *transport.CloseError 1006", err)
			}
			if _, _, err := a.Read(context.Background()); !errors.Is(err, transport.ErrClosed) {
				t.Errorf("Read after transport.Abort = %v, want transport.ErrClosed", err)
			}
			if err := transport.Abort(a); !errors.Is(err, transport.ErrClosed) {
				t.Errorf("second transport.Abort = %v, want transport.ErrClosed", err)
			}
			if err := a.Close(transport.StatusNormalClosure, ""); !errors.Is(err, transport.ErrClosed) {
				t.Errorf("Close after transport.Abort = %v, want transport.ErrClosed", err)
			}
		})
	}
}

func testReadContext(t *testing.T, newPair NewPairFunc) {
	a, _ := newPair(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := a.Read(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Read with canceled context = %v, want context.Canceled", err)
	}
}

func testReadLimit(t *testing.T, newPair NewPairFunc) {
	const limit = 1000
	t.Run("AtLimit", func(t *testing.T) {
		a, b := newPair(t, limit)
		msg := bytes.Repeat([]byte("a"), limit)
		mustWrite(t, a, transport.MessageText, msg)
		mustRead(t, b, transport.MessageText, msg)
	})
	t.Run("OverLimit", func(t *testing.T) {
		a, b := newPair(t, limit)
		mustWrite(t, a, transport.MessageText, bytes.Repeat([]byte("a"), limit+1))
		wantClose(t, b, transport.StatusMessageTooBig, "*")
		// The writer learns why its connection ended.
		wantClose(t, a, transport.StatusMessageTooBig, "*")
	})
}

func testConcurrentWriters(t *testing.T, newPair NewPairFunc) {
	const writers, each = 8, 50
	a, b := newPair(t, 0)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			// Each message is w's letter repeated: an interleaved write would mix letters.
			msg := bytes.Repeat([]byte{byte('a' + w)}, 100+w*300)
			for range each {
				if err := a.Write(context.Background(), transport.MessageBinary, msg); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		})
	}
	counts := make(map[byte]int)
	for range writers * each {
		_, got, err := b.Read(context.Background())
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		w := got[0] - 'a'
		if len(got) != 100+int(w)*300 || bytes.Count(got, got[:1]) != len(got) {
			t.Fatalf("message from writer %d is mangled (%d bytes)", w, len(got))
		}
		counts[got[0]]++
	}
	wg.Wait()
	for w := range writers {
		if counts[byte('a'+w)] != each {
			t.Errorf("writer %d: %d messages, want %d", w, counts[byte('a'+w)], each)
		}
	}
}

// testReadBuffer reads through transport.ReadBuffer with one buffer reused from message to
// message, as a request loop does: every message arrives whole and intact whatever the
// buffer held before, and the read limit applies as it does to Read.
func testReadBuffer(t *testing.T, newPair NewPairFunc) {
	const limit = 100_000
	a, b := newPair(t, limit)
	var buf []byte
	for i, n := range []int{0, 1, 5, 300, 70_000, 17, 40_000, limit, 2} {
		typ := transport.MessageText
		if i%2 == 1 {
			typ = transport.MessageBinary
		}
		msg := bytes.Repeat([]byte{byte('a' + i)}, n)
		mustWrite(t, a, typ, msg)
		gotType, got, err := transport.ReadBuffer(context.Background(), b, buf[:0])
		if err != nil {
			t.Fatalf("ReadBuffer of %d bytes: %v", n, err)
		}
		if gotType != typ || !bytes.Equal(got, msg) {
			t.Fatalf("ReadBuffer = %v %q, want %v %q", gotType, abbrev(got), typ, abbrev(msg))
		}
		buf = got
	}
	mustWrite(t, a, transport.MessageText, bytes.Repeat([]byte("a"), limit+1))
	if _, _, err := transport.ReadBuffer(context.Background(), b, buf[:0]); transport.CloseStatus(err) != transport.StatusMessageTooBig {
		t.Fatalf("ReadBuffer over the limit = %v, want StatusMessageTooBig", err)
	}
}
