package transport_test

import (
	"context"
	"sync"
	"testing"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/transport/faultconn"
	"github.com/ansight-go/ansight/transport/transporttest"
)

// echoMessage is a typical small request: a tool.call envelope of about 300 bytes.
var echoMessage = []byte(`{"type":"tool.call","id":"4f0c2a1e-8d7b-4c55-9a3e-1b2c3d4e5f60","sentAt":"2026-07-30T01:00:00.1234567+00:00","sessionId":"s-1","capabilities":["tool.exec"],"payload":{"toolId":"ui.perform_action","callId":"c-42","arguments":{"action":"tap","nodeId":"node-17","timeoutMilliseconds":2000},"after":{"include":["visualTree"]}}}`)

// BenchmarkEcho measures one sequential round trip of echoMessage: write, the peer reads and
// writes it back, read. These are the baselines the protocol layers compare against.
func BenchmarkEcho(b *testing.B) {
	b.Run("Pipe", func(b *testing.B) {
		client, server := transport.Pipe(transport.PipeOptions{})
		benchEcho(b, client, server, context.Background())
	})
	b.Run("PipeFaultconn", func(b *testing.B) {
		// The fault layer with a plan that never fires: its pass-through cost.
		client, server := transport.Pipe(transport.PipeOptions{})
		fc := faultconn.Wrap(client, faultconn.Plan{Rules: []faultconn.Rule{{Match: faultconn.At(-1), Action: faultconn.Kill}}})
		benchEcho(b, fc, server, context.Background())
	})
	b.Run("WebSocket", func(b *testing.B) {
		client, server := transporttest.NewLoopbackPair(b, transporttest.Options{})
		benchEcho(b, client, server, context.Background())
	})
	b.Run("WebSocketCancelableContext", func(b *testing.B) {
		// A context that can end costs a timer per frame in the WebSocket library.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		client, server := transporttest.NewLoopbackPair(b, transporttest.Options{})
		benchEcho(b, client, server, ctx)
	})
}

// BenchmarkFrameEcho is BenchmarkEcho with a message the size of an ASFT frame (56-byte
// header, 64 KiB chunk) over WebSocket, each end handing back what it read (Recycle), as a
// host receiving an artifact does.
func BenchmarkFrameEcho(b *testing.B) {
	frame := make([]byte, 56+64<<10)
	client, server := transporttest.NewLoopbackPair(b, transporttest.Options{})
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			typ, data, err := server.Read(ctx)
			if err != nil {
				return
			}
			err = server.Write(ctx, typ, data)
			transport.Recycle(data)
			if err != nil {
				return
			}
		}
	})
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if err := client.Write(ctx, transport.MessageBinary, frame); err != nil {
			b.Fatal(err)
		}
		_, data, err := client.Read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		transport.Recycle(data)
	}
	b.StopTimer()
	transporttest.CloseBoth(client, server)
	wg.Wait()
}

func benchEcho(b *testing.B, client, server transport.Conn, ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { transporttest.Echo(ctx, server) })
	b.ReportAllocs()
	b.SetBytes(int64(len(echoMessage)))
	for b.Loop() {
		if err := client.Write(ctx, transport.MessageText, echoMessage); err != nil {
			b.Fatal(err)
		}
		if _, _, err := client.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	transporttest.CloseBoth(client, server)
	wg.Wait()
}
