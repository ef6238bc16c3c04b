package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"go.uber.org/goleak"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/transport/faultconn"
	"github.com/ansight-go/ansight/transport/transporttest"
	"github.com/ansight-go/ansight/wire"
)

// The tests wait for events, never against a clock: a request ends by a response, a
// transport error or its own timeout, and go test's -timeout stops a test that hangs (with
// every goroutine's stack). hostWait is the tool client's wait for an answer where no
// test means it to time out: longer than any test runs. A test in which a request must
// time out gives that request a short one (shortTimeout), and the calls that must succeed
// beside it their own long limit (echo).
const hostWait = 10 * time.Minute

// leakCheck fails the test if it leaves goroutines behind. Call it first: its check runs
// after every other cleanup of the test.
func leakCheck(t *testing.T) {
	t.Helper()
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

// fixture is an app with tools that let a test stop a call, a batch or a transfer in the
// middle.
type fixture struct {
	app       *app.App
	started   chan string   // the id of each blocking step as it begins
	release   chan struct{} // closed to let blocked steps go on
	once      sync.Once
	marks     atomic.Int64 // runs of f.mark
	ran       atomic.Int64 // runs of f.after (the batch step after the blocking one)
	blockErrs chan error   // what f.block's handler saw: nil if released, ctx error if cancelled
}

type nonceIn struct {
	Nonce string `json:"nonce"`
}

type nonceOut struct {
	Nonce string `json:"nonce"`
	Count int64  `json:"count,omitzero"`
}

type fileIn struct {
	Size  int64 `json:"size"`
	Stall bool  `json:"stall,omitzero"`
}

type fileOut struct {
	File wire.TransferDescriptor `json:"file"`
}

type none struct{}

// chunk is the SDK's ASFT frame payload size; a stalled file stops after the first one.
const chunk = 64 << 10

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{app: app.New(app.Options{}), started: make(chan string, 16), release: make(chan struct{}), blockErrs: make(chan error, 16)}
	t.Cleanup(f.releaseAll)
	def := func(id string, p wire.Policy) catalog.Definition {
		return catalog.Definition{ID: id, Name: id, Description: "Fault fixture " + id + ".", Category: "faults", Policy: p}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(app.Register(f.app, def("f.echo", wire.PolicyRead), func(ctx context.Context, c *app.Call, in nonceIn) (nonceOut, error) {
		return nonceOut{Nonce: in.Nonce}, nil
	}))
	must(app.Register(f.app, def("f.mark", wire.PolicyWrite), func(ctx context.Context, c *app.Call, in nonceIn) (nonceOut, error) {
		return nonceOut{Nonce: in.Nonce, Count: f.marks.Add(1)}, nil
	}))
	must(app.Register(f.app, def("f.block", wire.PolicyRead), func(ctx context.Context, c *app.Call, in none) (none, error) {
		f.started <- "f.block"
		select {
		case <-ctx.Done():
			f.blockErrs <- ctx.Err()
			return none{}, ctx.Err()
		case <-f.release:
			f.blockErrs <- nil
			return none{}, nil
		}
	}))
	must(app.Register(f.app, def("f.after", wire.PolicyRead), func(ctx context.Context, c *app.Call, in none) (none, error) {
		f.ran.Add(1)
		return none{}, nil
	}))
	must(app.Register(f.app, def("f.file", wire.PolicyRead), func(ctx context.Context, c *app.Call, in fileIn) (fileOut, error) {
		r := &patternReader{n: in.Size}
		if in.Stall {
			r.stallAt, r.stalled, r.release = chunk, f.started, f.release
		}
		return fileOut{File: c.SendArtifact("fault.bin", "application/octet-stream", in.Size, r)}, nil
	}))
	return f
}

func (f *fixture) releaseAll() { f.once.Do(func() { close(f.release) }) }

// await waits for a blocking step to begin.
func (f *fixture) await(t *testing.T, what string) {
	t.Helper()
	select {
	case got := <-f.started:
		if got != what {
			t.Fatalf("step %q began, want %q", got, what)
		}
	case <-t.Context().Done():
		t.Fatalf("step %q never began", what)
	}
}

// patternReader yields n bytes of a fixed pattern. With stallAt set, it reports on stalled
// once it has yielded stallAt bytes and waits for release, like a slow file or camera.
type patternReader struct {
	n, off, stallAt int64
	stalled         chan<- string
	release         <-chan struct{}
}

func (r *patternReader) Read(p []byte) (int, error) {
	if r.off >= r.n {
		return 0, io.EOF
	}
	if r.stallAt > 0 && r.off == r.stallAt {
		r.stallAt = 0
		r.stalled <- "f.file"
		<-r.release
	}
	k := int64(len(p))
	k = min(k, r.n-r.off)
	if r.stallAt > 0 {
		k = min(k, r.stallAt-r.off)
	}
	for i := range k {
		p[i] = pattern(r.off + i)
	}
	r.off += k
	return int(k), nil
}

func pattern(i int64) byte { return byte(i*7 + i>>9) }

// link is one session at the protocol level: the host's tool client and the app's
// runtime over a real loopback WebSocket, each end wrapped in a fault layer.
type link struct {
	client    *tools.Client
	host, app *faultconn.Conn
	dir       string // the artifact directory
	midway    midway

	cancel    context.CancelFunc
	readDone  chan struct{}
	serveDone chan struct{}
	serveErr  error
}

// newLink connects f's app to a tool client, injecting hostPlan on the host's end and
// appPlan on the app's end. The catalog is fetched before it returns, so that the faults
// of a plan meet the test's own requests.
func newLink(t *testing.T, f *fixture, hostPlan, appPlan faultconn.Plan, opts tools.Options) *link {
	t.Helper()
	appEnd, hostEnd := transporttest.NewLoopbackPair(t, transporttest.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	l := &link{
		host: faultconn.Wrap(hostEnd, hostPlan), app: faultconn.Wrap(appEnd, appPlan), dir: t.TempDir(),
		cancel: cancel, readDone: make(chan struct{}), serveDone: make(chan struct{}),
	}
	opts.ArtifactDir = l.dir
	l.midway = newMidway()
	opts.OnTransfer = l.midway.observe
	if opts.Timeout == 0 {
		opts.Timeout = hostWait
	}
	opts.MaxToolPolicy = wire.PolicyWrite
	l.client = tools.NewClient(l.host, opts)
	// The host session's reader, as host.Server runs it: every message to the client, a
	// failed read closes it.
	go func() {
		defer close(l.readDone)
		for {
			typ, data, err := l.host.Read(ctx)
			if err != nil {
				l.client.Close(err)
				return
			}
			l.client.HandleMessage(typ, data)
		}
	}()
	go func() {
		defer close(l.serveDone)
		l.serveErr = f.app.Serve(ctx, l.app, app.ServeOptions{})
	}()
	l.client.Open()
	t.Cleanup(l.close)
	if _, err := l.client.Catalog(ctx); err != nil {
		t.Fatalf("catalog: %v", err)
	}
	return l
}

func (l *link) close() {
	l.cancel()
	l.host.Close(transport.StatusNormalClosure, "")
	l.app.Close(transport.StatusNormalClosure, "")
	<-l.readDone
	<-l.serveDone
}

// served waits for the app's runtime to stop serving and returns why.
func (l *link) served(t *testing.T) error {
	t.Helper()
	select {
	case <-l.serveDone:
		return l.serveErr
	case <-t.Context().Done():
		t.Fatal("the app's runtime kept serving a dead connection")
		return nil
	}
}

// midway reports transfers that have received bytes but are not complete: a partial file
// exists on the host's side.
type midway chan string

func newMidway() midway { return make(midway, 256) }

// observe is a tools.Options.OnTransfer.
func (m midway) observe(p tools.TransferProgress) {
	if p.Status == tools.StatusReceiving && p.ReceivedBytes > 0 {
		select {
		case m <- p.TransferID:
		default:
		}
	}
}

// await waits until a transfer is midway.
func (m midway) await(t *testing.T) {
	t.Helper()
	select {
	case <-m:
	case <-t.Context().Done():
		t.Fatal("no transfer received any byte")
	}
}

// within runs f and fails the test if it has not returned when the test ends.
func within[T any](t *testing.T, what string, f func() (T, error)) (T, error) {
	t.Helper()
	return start(t, what, f)()
}

// start runs f in the background; the returned function waits for its outcome and fails
// the test if it has not arrived when the test ends.
func start[T any](t *testing.T, what string, f func() (T, error)) func() (T, error) {
	t.Helper()
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	return func() (T, error) {
		t.Helper()
		select {
		case r := <-ch:
			return r.v, r.err
		case <-t.Context().Done():
			t.Fatalf("%s: stuck caller (no answer and no error)", what)
			var zero T
			return zero, nil
		}
	}
}

func nonceArgs(n string) jsontext.Value { return jsontext.Value(fmt.Sprintf(`{"nonce":%q}`, n)) }

// echo calls f.echo with nonce on c and checks the answer.
func echo(t *testing.T, c *tools.Client, nonce string) {
	t.Helper()
	// A call that must succeed waits as long as the app takes, even on a link whose
	// client times out quickly (the caller's limit overrides the client's).
	ctx, cancel := tools.WithTimeout(context.Background(), hostWait)
	defer cancel()
	res, err := within(t, "f.echo", func() (*tools.CallResult, error) {
		return c.Call(ctx, wire.Call{ToolID: "f.echo", Arguments: nonceArgs(nonce)})
	})
	if err != nil {
		t.Fatalf("f.echo %s: %v", nonce, err)
	}
	checkNonce(t, res.Payload.Result, nonce)
}

func checkNonce(t *testing.T, raw jsontext.Value, nonce string) nonceOut {
	t.Helper()
	var out nonceOut
	if err := wire.Unmarshal(raw, &out); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	if out.Nonce != nonce {
		t.Fatalf("answered nonce %q, want %q: misrouted response", out.Nonce, nonce)
	}
	return out
}

// wantTransportError checks that err is the client's transport error with cause.
func wantTransportError(t *testing.T, err error, cause error) {
	t.Helper()
	te, ok := errors.AsType[*tools.TransportError](err)
	if !ok {
		t.Fatalf("error %v (%T), want a *tools.TransportError", err, err)
	}
	if cause != nil && !errors.Is(te, cause) {
		t.Fatalf("transport error %v, want cause %v", te, cause)
	}
	if _, ok := errors.AsType[*wire.Error](err); ok {
		t.Fatalf("transport error %v masquerades as an app error", err)
	}
}

// files lists the regular files under dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// noPartialArtifacts checks that dir holds exactly the completed artifacts.
func noPartialArtifacts(t *testing.T, dir string, completed ...tools.Artifact) {
	t.Helper()
	want := map[string]bool{}
	for _, a := range completed {
		want[a.Path] = true
	}
	for _, f := range files(t, dir) {
		if !want[f] {
			t.Errorf("partial artifact left behind: %s", f)
		}
	}
}
