package conformance_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/conformance"
	"github.com/ansight-go/ansight/examples/notes/notestest"
	"github.com/ansight-go/ansight/transport"
)

// TestDemoOverWebSocket runs the suite over a real loopback WebSocket: the demo app dials,
// the suite holds the accepted end, as a host would.
func TestDemoOverWebSocket(t *testing.T) {
	accepted := make(chan transport.Conn, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, err := transport.Accept(w, r, transport.AcceptOptions{}); err == nil {
			accepted <- c
		}
	}))
	defer srv.Close()
	conn, err := transport.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http")+"/ws", transport.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	a := newDemoApp(t)
	wg.Go(func() { a.Serve(ctx, conn, app.ServeOptions{}) })
	target := conformance.NewConnTarget(<-accepted, "conformance-ws-001")

	rep := conformance.Run(context.Background(), target, conformance.Options{AllowWrite: true, Scenario: notestest.ConformanceScenario()})
	target.Close()
	cancel()
	wg.Wait()
	conn.Close(transport.StatusNormalClosure, "")
	if !rep.OK() {
		var out strings.Builder
		rep.WriteText(&out)
		t.Fatalf("the demo app fails over WebSocket:\n%s", out.String())
	}
}
