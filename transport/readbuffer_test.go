package transport_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/transport/transporttest"
)

// FuzzReadBuffer holds the buffered read (transport.ReadBuffer, one buffer reused from
// message to message) against the plain one (Read) over real WebSocket connections: the
// fuzzer's bytes, cut into messages, arrive the same both ways, and a message over the read
// limit ends both connections with StatusMessageTooBig.
func FuzzReadBuffer(f *testing.F) {
	f.Add([]byte("\x03abc\x00\x05hello"), uint16(4096))
	f.Add(bytes.Repeat([]byte{0xff}, 600), uint16(300))
	f.Add([]byte{}, uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, limit uint16) {
		readLimit := int64(limit) + 1
		plainW, plainR := transporttest.NewLoopbackPair(t, transporttest.Options{Accept: transport.AcceptOptions{ReadLimit: readLimit}})
		bufW, bufR := transporttest.NewLoopbackPair(t, transporttest.Options{Accept: transport.AcceptOptions{ReadLimit: readLimit}})
		ctx := context.Background()
		var buf []byte
		for i := 0; len(data) > 0 && i < 16; i++ {
			// A message: the first byte says how many of the following bytes it takes,
			// times 7 (so that sizes cross the limit), the bytes repeated as needed.
			n := int(data[0]) * 7
			data = data[1:]
			msg := make([]byte, n)
			for j := range msg {
				if len(data) > 0 {
					msg[j] = data[j%len(data)]
				}
			}
			typ := transport.MessageText
			if n%2 == 1 {
				typ = transport.MessageBinary
			}
			if err := plainW.Write(ctx, typ, msg); err != nil {
				t.Fatal(err)
			}
			if err := bufW.Write(ctx, typ, msg); err != nil {
				t.Fatal(err)
			}
			pt, plain, perr := plainR.Read(ctx)
			bt, got, berr := transport.ReadBuffer(ctx, bufR, buf[:0])
			if (perr == nil) != (berr == nil) || transport.CloseStatus(perr) != transport.CloseStatus(berr) {
				t.Fatalf("message of %d bytes (limit %d): Read %v, ReadBuffer %v", n, readLimit, perr, berr)
			}
			if perr != nil {
				if int64(n) <= readLimit || transport.CloseStatus(perr) != transport.StatusMessageTooBig {
					t.Fatalf("message of %d bytes (limit %d) refused: %v", n, readLimit, perr)
				}
				return
			}
			if pt != typ || bt != typ || !bytes.Equal(plain, msg) || !bytes.Equal(got, msg) {
				t.Fatalf("message %d of %d bytes: Read %v %d B, ReadBuffer %v %d B", i, n, pt, len(plain), bt, len(got))
			}
			buf = got
			data = data[min(len(data), n/7):]
		}
	})
}
