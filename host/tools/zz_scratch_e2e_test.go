package tools_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/examples/demoapp/demo"
	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/wire"
)

func scratchSession(b *testing.B) *tools.Client {
	dir := b.TempDir()
	ctx := context.Background()
	opts := host.Options{DiscoveryAddr: "127.0.0.1:0", ListenAddr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)}
	opts.Tools.ArtifactDir = filepath.Join(dir, "artifacts")
	srv, err := host.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	a := app.New(app.Options{})
	if err := demo.New(demo.Options{}).Register(a); err != nil {
		b.Fatal(err)
	}
	conn, err := connect.Dial(ctx, a, connect.Options{
		AppID: "scratch", AppName: "Ansight bench", AppVersion: "1.0", DeviceName: "bench",
		Mode: connect.ModeLocal, HostAddress: "127.0.0.1", DiscoveryPorts: []int{int(srv.DiscoveryAddr().Port())},
		StateDir: filepath.Join(dir, "app"),
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, s := range srv.Sessions() {
			if info := s.Info(); info.State == host.StateConnected && info.Opened {
				return s.Tools()
			}
		}
	}
	b.Fatal("no session")
	return nil
}

func BenchmarkScratchE2E(b *testing.B) {
	c := scratchSession(b)
	call := wire.Call{ToolID: "app.get_state", Arguments: jsontext.Value(`{}`)}
	ctx := context.Background()
	for range 200 {
		if _, err := c.Call(ctx, call); err != nil {
			b.Fatal(err)
		}
	}
	for _, callers := range []int{1, 8} {
		b.Run(map[int]string{1: "c1", 8: "c8"}[callers], func(b *testing.B) {
			b.ReportAllocs()
			n := b.N
			var wg sync.WaitGroup
			per := n / callers
			b.ResetTimer()
			for range callers {
				wg.Go(func() {
					for range per {
						if _, err := c.Call(ctx, call); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
		})
	}
}

func BenchmarkScratchLarge(b *testing.B) {
	c := scratchSession(b)
	call := wire.Call{ToolID: "data.large_result", Arguments: jsontext.Value(`{"sizeBytes":1048576}`)}
	ctx := context.Background()
	if _, err := c.Call(ctx, call); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Call(ctx, call); err != nil {
			b.Fatal(err)
		}
	}
}
