package tools

import (
	"bytes"
	"context"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// recConn records the requests the client writes, and the last tool.catalog payload it
// reads.
type recConn struct {
	transport.Conn
	mu     sync.Mutex
	sent   []wire.Envelope
	answer []byte
}

func (r *recConn) Read(ctx context.Context) (transport.MessageType, []byte, error) {
	typ, data, err := r.Conn.Read(ctx)
	if env, derr := wire.DecodeEnvelope(data); err == nil && derr == nil && env.Type == wire.TypeCatalog {
		r.mu.Lock()
		r.answer = bytes.Clone(env.Payload)
		r.mu.Unlock()
	}
	return typ, data, err
}

func (r *recConn) Write(ctx context.Context, typ transport.MessageType, data []byte) error {
	if env, err := wire.DecodeEnvelope(data); err == nil {
		env.Payload = bytes.Clone(env.Payload) // data is the caller's again once Write returns
		r.mu.Lock()
		r.sent = append(r.sent, env)
		r.mu.Unlock()
	}
	return r.Conn.Write(ctx, typ, data)
}

// queries returns the queries sent since the last call, as detailsOf strings.
func (r *recConn) queries(t *testing.T) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var qs []wire.Query
	for _, env := range r.sent {
		if env.Type == wire.TypeQuery {
			var q wire.Query
			if err := wire.Unmarshal(env.Payload, &q); err != nil {
				t.Fatal(err)
			}
			qs = append(qs, q)
		}
	}
	r.sent = nil
	return detailsOf(qs)
}

type echoIn struct {
	N int `json:"n,omitzero"`
}

type fileIn struct {
	Size  int `json:"size"`
	Count int `json:"count,omitzero"`
}

// demoApp is a real SDK runtime with a few tools.
func demoApp(t *testing.T, available *atomic.Bool) *app.App {
	t.Helper()
	a := app.New(app.Options{Guard: catalog.GuardFullAccess})
	def := func(id string, p wire.Policy) catalog.Definition {
		return catalog.Definition{ID: id, Name: id, Description: "demo " + id, Category: "demo", Policy: p}
	}
	echo := func(ctx context.Context, c *app.Call, in echoIn) (echoIn, error) { return in, nil }
	for _, err := range []error{
		app.Register(a, def("demo.echo", wire.PolicyRead), echo),
		app.Register(a, def("demo.write", wire.PolicyWrite), echo),
		app.Register(a, def("demo.delete", wire.PolicyCritical), echo),
		app.Register(a, def("demo.maybe", wire.PolicyRead), echo, app.WithAvailability(func(context.Context) wire.Runtime {
			if available.Load() {
				return wire.Runtime{Available: true}
			}
			return wire.Runtime{Available: false, Code: "demo_not_ready", Reason: "Not ready.", Retryable: true}
		})),
		app.Register(a, def("demo.fail", wire.PolicyRead), func(ctx context.Context, c *app.Call, in echoIn) (echoIn, error) {
			return in, app.ToolErrorf("demo_failed", "failed on purpose")
		}),
		a.Register(app.Tool{
			Definition: catalog.Definition{ID: "demo.files", Name: "files", Description: "sends files", Category: "demo",
				Policy:          wire.PolicyRead,
				ArgumentsSchema: jsontext.Value(`{"type":"object","properties":{"size":{"type":"integer"},"count":{"type":"integer"}},"required":["size"]}`),
				ResultSchema:    jsontext.Value(`{"type":"object","additionalProperties":true}`)},
			Handler: func(ctx context.Context, c *app.Call) (any, error) {
				var in fileIn
				if err := wire.Unmarshal(c.Arguments, &in); err != nil {
					return nil, err
				}
				var files []wire.TransferDescriptor
				for i := range max(in.Count, 1) {
					data := fileContent(in.Size, i)
					files = append(files, c.SendArtifact("file.bin", "application/octet-stream", int64(len(data)), bytes.NewReader(data)))
				}
				return map[string]any{"files": files}, nil
			},
		}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return a
}

func fileContent(size, i int) []byte {
	b := randomBytes(size)
	if size > 0 {
		b[0] = byte(i)
	}
	return b
}

// serveDemo connects a Client to a over a Pipe: the app serves its end, a host reader loop
// feeds the client.
func serveDemo(t *testing.T, a *app.App, opts Options) (*Client, *recConn) {
	t.Helper()
	if opts.ArtifactDir == "" {
		opts.ArtifactDir = t.TempDir()
	}
	hostEnd, appEnd := transport.Pipe(transport.PipeOptions{})
	rec := &recConn{Conn: hostEnd}
	c := NewClient(rec, opts)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { a.Serve(ctx, appEnd, app.ServeOptions{}) }) //nolint:errcheck // ends with the test
	wg.Go(func() {
		for {
			typ, data, err := rec.Read(ctx)
			if err != nil {
				c.Close(err)
				return
			}
			c.HandleMessage(typ, data)
		}
	})
	t.Cleanup(func() {
		cancel()
		hostEnd.Close(transport.StatusNormalClosure, "")
		appEnd.Close(transport.StatusNormalClosure, "")
		wg.Wait()
	})
	c.Open()
	return c, rec
}

func TestAgainstSDKCatalog(t *testing.T) {
	t.Parallel()
	var available atomic.Bool
	a := demoApp(t, &available)
	c, rec := serveDemo(t, a, Options{MaxToolPolicy: wire.PolicyWrite})
	ctx := t.Context()

	cat, err := c.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.queries(t); len(got) != 2 || got[0] != "index" || got[1] != "definitions demo.delete demo.echo demo.fail demo.files demo.maybe demo.write" {
		t.Fatalf("queries %q", got)
	}
	for id, code := range map[string]wire.Code{"demo.echo": "", "demo.write": "", "demo.delete": wire.CodePolicyNotGranted, "demo.maybe": "demo_not_ready"} {
		e := cat.Tool(id)
		if e == nil || len(e.ArgumentsSchema) == 0 {
			t.Fatalf("%s: %+v", id, e)
		}
		if got := wire.Code(""); e.Denial != nil {
			got = e.Denial.Code
			if got != code {
				t.Errorf("%s denial %q, want %q", id, got, code)
			}
		} else if code != "" {
			t.Errorf("%s: no denial, want %q", id, code)
		}
	}

	// Unchanged: one three-key round trip.
	if _, err := c.Catalog(ctx); err != nil {
		t.Fatal(err)
	}
	if got := rec.queries(t); len(got) != 1 || got[0] != "index?"+cat.Revision+"/"+cat.AvailabilityRevision {
		t.Fatalf("queries %q", got)
	}

	// Availability changes: the availability-only form, no definitions.
	available.Store(true)
	cat2, err := c.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.queries(t); len(got) != 1 {
		t.Fatalf("queries %q", got)
	}
	if e := cat2.Tool("demo.maybe"); e.Denial != nil || !e.IsExecutable() || cat2.AvailabilityRevision == cat.AvailabilityRevision {
		t.Errorf("demo.maybe %+v", e)
	}
	if _, err := c.Call(ctx, wire.Call{ToolID: "demo.maybe"}); err != nil {
		t.Fatal(err)
	}

	// A guard change is a new revision: full index, and no definition is fetched again.
	if err := a.SetGuard(catalog.GuardReadOnly); err != nil {
		t.Fatal(err)
	}
	cat3, err := c.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.queries(t); len(got) != 1 {
		t.Fatalf("queries %q (definitions must come from the cache)", got)
	}
	if cat3.Tool("demo.write") != nil || cat3.Revision == cat.Revision {
		t.Errorf("write tool still listed under a read-only guard: %v", ids(cat3))
	}
	_, err = c.Call(ctx, wire.Call{ToolID: "demo.write"})
	if re, ok := errorsAs[*RefusalError](err); !ok || re.Err.Code != wire.CodeNotFound {
		t.Errorf("err = %v", err)
	}
}

func TestAgainstSDKCalls(t *testing.T) {
	t.Parallel()
	var available atomic.Bool
	c, _ := serveDemo(t, demoApp(t, &available), Options{MaxToolPolicy: wire.PolicyWrite})
	ctx := t.Context()

	res, err := c.Call(ctx, wire.Call{ToolID: "demo.echo", Arguments: jsontext.Value(`{"n":7}`)})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Payload.Result) != `{"n":7}` || res.Payload.ToolID != "demo.echo" {
		t.Errorf("result %s", res.Raw)
	}
	// The app validates too: without ValidateArguments the schema error comes from it.
	_, err = c.Call(ctx, wire.Call{ToolID: "demo.echo", Arguments: jsontext.Value(`{"n":"seven"}`)})
	if we, ok := errorsAs[*wire.Error](err); !ok || we.Code != wire.CodeArgumentsSchemaInvalid {
		t.Errorf("err = %v", err)
	}
	if _, ok := errorsAs[*RefusalError](err); ok {
		t.Error("the app's answer is not a local refusal")
	}
	_, err = c.Call(ctx, wire.Call{ToolID: "demo.fail"})
	if we, ok := errorsAs[*wire.Error](err); !ok || we.Code != "demo_failed" {
		t.Errorf("err = %v", err)
	}
	_, err = c.Call(ctx, wire.Call{ToolID: "demo.delete"})
	if wire.CodeOf(err) != wire.CodePolicyNotGranted {
		t.Errorf("err = %v", err)
	}
	_, err = c.Call(ctx, wire.Call{ToolID: "demo.maybe"})
	if re, ok := errorsAs[*RefusalError](err); !ok || re.Err.Code != "demo_not_ready" || !re.Err.Retryable {
		t.Errorf("err = %v", err)
	}

	b, err := c.Batch(ctx, true, []wire.Call{
		{ToolID: "demo.echo", CallID: "a", Arguments: jsontext.Value(`{"n":1}`)},
		{ToolID: "demo.fail", CallID: "b"},
		{ToolID: "demo.write", CallID: "c", Arguments: jsontext.Value(`{"n":3}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := b.Payload
	if p.Success || p.Requested != 3 || len(p.Results) != 3 || p.Results[1].Error == nil || p.Results[1].Error.Code != "demo_failed" ||
		p.Results[2].CallID != "c" || string(p.Results[2].Result) != `{"n":3}` {
		t.Errorf("batch %s", b.Raw)
	}
}

func TestAgainstSDKValidation(t *testing.T) {
	t.Parallel()
	var available atomic.Bool
	c, rec := serveDemo(t, demoApp(t, &available), Options{MaxToolPolicy: wire.PolicyWrite, ValidateArguments: true})
	_, err := c.Call(t.Context(), wire.Call{ToolID: "demo.echo", Arguments: jsontext.Value(`{"n":"seven"}`)})
	if re, ok := errorsAs[*RefusalError](err); !ok || re.Err.Code != wire.CodeArgumentsSchemaInvalid {
		t.Fatalf("err = %v", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, env := range rec.sent {
		if env.Type == wire.TypeCall {
			t.Error("an invalid call was sent")
		}
	}
}

func TestAgainstSDKArtifacts(t *testing.T) {
	t.Parallel()
	var available atomic.Bool
	dir := t.TempDir()
	c, _ := serveDemo(t, demoApp(t, &available), Options{ArtifactDir: dir})
	ctx := t.Context()

	res, err := c.Call(ctx, wire.Call{ToolID: "demo.files", Arguments: jsontext.Value(`{"size":300000,"count":3}`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Artifacts) != 3 {
		t.Fatalf("artifacts %+v", res.Artifacts)
	}
	var names []string
	for i, a := range res.Artifacts {
		if a.Err != nil {
			t.Fatalf("artifact %d: %v", i, a.Err)
		}
		got, err := os.ReadFile(a.Path)
		if err != nil || !bytes.Equal(got, fileContent(300000, i)) {
			t.Errorf("artifact %d differs (%d bytes, %v)", i, len(got), err)
		}
		names = append(names, a.Path[len(dir)+1:])
	}
	if !slices.Equal(names, []string{"file.bin", "file-1.bin", "file-2.bin"}) {
		t.Errorf("names %v", names)
	}
	var out struct {
		Files []wire.TransferDescriptor `json:"files"`
	}
	if err := wire.Unmarshal(res.Payload.Result, &out); err != nil {
		t.Fatal(err)
	}
	for i, d := range out.Files {
		if d.Status != StatusComplete || d.ArtifactPath != res.Artifacts[i].Path || d.ReceivedBytes != 300000 {
			t.Errorf("descriptor %d %+v", i, d)
		}
	}

	// Several calls of one batch, each with a transfer, and an empty file.
	b, err := c.Batch(ctx, false, []wire.Call{
		{ToolID: "demo.files", Arguments: jsontext.Value(`{"size":70000}`)},
		{ToolID: "demo.files", Arguments: jsontext.Value(`{"size":0}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Artifacts) != 2 || b.Artifacts[0].Err != nil || b.Artifacts[1].Err != nil || b.Artifacts[1].SizeBytes != 0 {
		t.Fatalf("batch artifacts %+v", b.Artifacts)
	}
	if s := c.Stats(); s.TransfersCompleted != 5 || s.TransfersFailed != 0 || s.RejectedFrames != 0 || s.UnmatchedResponses != 0 {
		t.Errorf("stats %+v", s)
	}
}
