package conformance_test

import (
	"context"
	"sync"
	"testing"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/conformance"
	"github.com/ansight-go/ansight/examples/notes"
	"github.com/ansight-go/ansight/transport"
)

// newDemoApp returns the demo app with every tool the suite can use.
func newDemoApp(t testing.TB) *app.App {
	t.Helper()
	a := app.New(app.Options{Guard: catalog.GuardFullAccess})
	m := notes.New(notes.Options{})
	if err := m.Register(a); err != nil {
		t.Fatal(err)
	}
	// The standard file, data and preference tools too, so the tools.* checks run.
	dir, cleanup, err := m.RegisterFiles(a, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	stop, err := m.RegisterData(a, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return a
}

// serve runs handler as the app end of a Pipe and returns the suite's target. Cleanup
// closes the target and waits for the app.
func serve(t testing.TB, handler func(ctx context.Context, conn transport.Conn)) *conformance.ConnTarget {
	t.Helper()
	appEnd, hostEnd := transport.Pipe(transport.PipeOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { handler(ctx, appEnd) })
	target := conformance.NewConnTarget(hostEnd, "conformance-test-001")
	t.Cleanup(func() {
		target.Close()
		cancel()
		appEnd.Close(transport.StatusNormalClosure, "")
		wg.Wait()
	})
	return target
}

// serveApp serves a over a Pipe.
func serveApp(t testing.TB, a *app.App) *conformance.ConnTarget {
	return serve(t, func(ctx context.Context, conn transport.Conn) { a.Serve(ctx, conn, app.ServeOptions{}) })
}
