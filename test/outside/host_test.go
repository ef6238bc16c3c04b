package outside_test

import (
	"context"
	"testing"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/wire"
)

// A host and an app built from public packages only, connected over real loopback sockets
// (UDP enrollment, authenticated WebSocket): the host reads the app's catalog and calls its
// tool. This is what a module outside ansight-go can assemble today.
func TestHostDrivesAppFromOutside(t *testing.T) {
	t.Parallel()
	srv, err := host.New(host.Options{DiscoveryAddr: "127.0.0.1:0", ListenAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	events, unsubscribe := srv.Subscribe(64)
	defer unsubscribe()
	if err := srv.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	type in struct {
		Name string `json:"name"`
	}
	type out struct {
		Text string `json:"text"`
	}
	a := app.New(app.Options{})
	err = app.Register(a, catalog.Definition{ID: "demo.greet", Name: "Greet", Category: "demo", Policy: wire.PolicyRead,
		Description: "Greets someone by name."},
		func(ctx context.Context, c *app.Call, in in) (out, error) {
			return out{Text: "Hello, " + in.Name + "!"}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	local := connect.Local{HostAddress: "127.0.0.1", DiscoveryPorts: []int{int(srv.DiscoveryAddr().Port())}}
	conn, err := connect.Dial(ctx, a, local, connect.Options{AppID: "com.example.outside", StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	var sess *host.Session
	for sess == nil {
		select {
		case ev := <-events:
			if ev.Info.AppID == "com.example.outside" && ev.Info.Opened {
				sess = ev.Session
			}
		case <-ctx.Done():
			t.Fatal("the host never saw the app's session open")
		}
	}
	cat, err := sess.Tools().Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.Tools) != 1 || cat.Tools[0].ID != "demo.greet" {
		t.Fatalf("catalog = %+v", cat.Tools)
	}
	res, err := sess.Tools().Call(ctx, wire.Call{ToolID: "demo.greet", Arguments: []byte(`{"name":"Ada"}`)})
	if err != nil {
		t.Fatal(err)
	}
	var got out
	if err := wire.Unmarshal(res.Payload.Result, &got); err != nil || got.Text != "Hello, Ada!" {
		t.Errorf("result = %s (%v)", res.Raw, err)
	}
}
