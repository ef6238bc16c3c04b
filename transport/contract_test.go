package transport_test

import (
	"testing"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/transport/transporttest"
)

func TestPipeContract(t *testing.T) {
	t.Parallel()
	transporttest.RunConnTests(t, func(t *testing.T, readLimit int64) (transport.Conn, transport.Conn) {
		a, b := transport.Pipe(transport.PipeOptions{ReadLimit: readLimit})
		t.Cleanup(func() { transporttest.CloseBoth(a, b) })
		return a, b
	})
}

func TestWebSocketContract(t *testing.T) {
	t.Parallel()
	transporttest.RunConnTests(t, func(t *testing.T, readLimit int64) (transport.Conn, transport.Conn) {
		return transporttest.NewLoopbackPair(t, transporttest.Options{
			Dial:   transport.DialOptions{ReadLimit: readLimit},
			Accept: transport.AcceptOptions{ReadLimit: readLimit},
		})
	})
}
