package fleet

import (
	"context"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/nats-io/nats.go"

	"github.com/ansight-go/ansight/host/control"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

const (
	notesApp = "com.ansight.demo.notes"
	otherApp = "com.example.other"
)

// threeHosts is the fleet most tests use: hosts a, b and c with the demo app on each, and
// a second app on b.
type threeHosts struct {
	nats    *natsServer
	cfg     Config
	a, b, c *testHost
	ids     map[string]string // "a", "b", "c", "b2" → fleet-wide session id
}

func startThreeHosts(t *testing.T) *threeHosts {
	t.Helper()
	ns := startNATS(t, nil)
	f := &threeHosts{nats: ns, cfg: testConfig(ns), ids: map[string]string{}}
	f.a = startTestHost(t, f.cfg, "a")
	f.b = startTestHost(t, f.cfg, "b")
	f.c = startTestHost(t, f.cfg, "c")
	f.ids["a"] = QualifiedID(f.a.connectApp(notesApp), "a")
	f.ids["b"] = QualifiedID(f.b.connectApp(notesApp), "b")
	f.ids["b2"] = QualifiedID(f.b.connectApp(otherApp), "b")
	f.ids["c"] = QualifiedID(f.c.connectApp(notesApp), "c")
	return f
}

func TestFleetAcrossHosts(t *testing.T) {
	f := startThreeHosts(t)
	c := dialClient(t, f.cfg)
	ctx := context.Background()

	t.Run("list", func(t *testing.T) {
		list := waitListing(t, c, 4)
		var got []string
		for _, s := range list.Sessions {
			got = append(got, s.ID+" "+s.Host+" "+s.AppID+" "+s.DeviceName+" "+string(s.MaxToolPolicy)+" "+s.State)
		}
		want := []string{
			f.ids["a"] + " a " + notesApp + " device-a write connected",
			f.ids["b"] + " b " + notesApp + " device-b write connected",
			f.ids["b2"] + " b " + otherApp + " device-b write connected",
			f.ids["c"] + " c " + notesApp + " device-c write connected",
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("listing:\n got %q\nwant %q", got, want)
		}
	})

	t.Run("tools, and the listing follows the catalog", func(t *testing.T) {
		tools, err := c.Tools(ctx, f.ids["b2"], hostapi.ToolsRequest{Query: "note", Policy: "write"})
		if err != nil {
			t.Fatal(err)
		}
		if tools.SessionID != f.ids["b2"] || tools.Count == 0 || tools.TotalCount <= tools.Count {
			t.Fatalf("tools = %+v", tools)
		}
		for _, e := range tools.Tools {
			if e.Policy != wire.PolicyWrite {
				t.Errorf("tool %s has policy %s", e.ID, e.Policy)
			}
		}
		// The host fetched the catalog: its next announcement carries the tool count.
		eventually(t, "the tool count in the listing", func() bool {
			s, err := c.Session(ctx, f.ids["b2"])
			return err == nil && s.ToolCount == tools.TotalCount && s.Revision == tools.Revision
		})
		one, err := c.Tool(ctx, f.ids["b2"], "notes.create")
		if err != nil || one.Tool.Policy != wire.PolicyWrite || len(one.Tool.ArgumentsSchema) == 0 {
			t.Fatalf("tool = %+v, %v", one, err)
		}
	})

	t.Run("calls go to the owning host", func(t *testing.T) {
		res, err := c.Call(ctx, f.ids["a"], hostapi.CallRequest{ToolID: "notes.create", Arguments: jsontext.Value(`{"title":"made over the fleet"}`)}, nil)
		if err != nil || !res.Success || res.SessionID != f.ids["a"] {
			t.Fatalf("create on a = %+v, %v", res, err)
		}
		titles := func(id string) string {
			res, err := c.Call(ctx, id, hostapi.CallRequest{ToolID: "notes.list"}, nil)
			if err != nil || !res.Success {
				t.Fatalf("list on %s = %+v, %v", id, res, err)
			}
			return string(res.Result.Result)
		}
		if got := titles(f.ids["a"]); !strings.Contains(got, "made over the fleet") {
			t.Errorf("notes on a = %s", got)
		}
		if got := titles(f.ids["c"]); strings.Contains(got, "made over the fleet") {
			t.Errorf("the note reached c: %s", got)
		}
	})

	t.Run("batch", func(t *testing.T) {
		res, err := c.Batch(ctx, f.ids["b"], hostapi.BatchRequest{Calls: []hostapi.CallRequest{
			{ToolID: "notes.create", Arguments: jsontext.Value(`{"title":"batched"}`)},
			{ToolID: "notes.list"},
		}}, nil)
		if err != nil || !res.Success || res.Result == nil || len(res.Result.Results) != 2 || res.SessionID != f.ids["b"] {
			t.Fatalf("batch = %+v, %v", res, err)
		}
		if !strings.Contains(string(res.Result.Results[1].Result), "batched") {
			t.Errorf("second call = %s", res.Result.Results[1].Result)
		}
	})

	t.Run("screenshot", func(t *testing.T) {
		res, err := c.Call(ctx, f.ids["c"], hostapi.CallRequest{ToolID: wire.ScreenshotToolID, Arguments: jsontext.Value(`{"format":"png"}`)}, nil)
		if err != nil || !res.Success || len(res.Artifacts) != 1 {
			t.Fatalf("screenshot = %+v, %v", res, err)
		}
		a := res.Artifacts[0]
		if a.Status != "complete" || !strings.HasPrefix(a.Path, c.opts.ArtifactDir) {
			t.Fatalf("artifact = %+v", a)
		}
		file, err := os.Open(a.Path)
		if err != nil {
			t.Fatal(err)
		}
		defer file.Close()
		img, err := png.Decode(file)
		if err != nil || img.Bounds().Dx() == 0 {
			t.Fatalf("the screenshot is not a PNG: %v", err)
		}
	})

	t.Run("multi-MiB artifact", func(t *testing.T) {
		const size = 5<<20 + 12345 // several chunks, the last one short
		var mu sync.Mutex
		var last hostapi.Progress
		var reports int
		res, err := c.Call(ctx, f.ids["b"], hostapi.CallRequest{ToolID: "files.generate",
			Arguments: jsontext.Value(`{"sizeBytes":5255225,"pattern":"sequence","fileName":"big.bin"}`)}, func(p hostapi.Progress) {
			mu.Lock()
			defer mu.Unlock()
			last, reports = p, reports+1
		})
		if err != nil || !res.Success || len(res.Artifacts) != 1 || res.Artifacts[0].Status != "complete" {
			t.Fatalf("generate = %+v, %v", res, err)
		}
		data, err := os.ReadFile(res.Artifacts[0].Path)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) != size || res.Artifacts[0].SizeBytes != size || filepath.Base(res.Artifacts[0].Path) != "big.bin" {
			t.Fatalf("got %d bytes at %s (%d announced)", len(data), res.Artifacts[0].Path, res.Artifacts[0].SizeBytes)
		}
		for i, b := range data {
			if b != byte(i%251) {
				t.Fatalf("byte %d is %d, not %d", i, b, i%251)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if reports < 2 || !last.Done || last.ReceivedBytes != size {
			t.Errorf("%d progress reports, the last %+v", reports, last)
		}
	})

	t.Run("the host's grant applies", func(t *testing.T) {
		// A local-mode grant is write: the host refuses the critical tool as it would a
		// local call, though this client may use the critical subject.
		res, err := c.Call(ctx, f.ids["c"], hostapi.CallRequest{ToolID: "notes.delete_all", Arguments: jsontext.Value(`{}`)}, nil)
		if err != nil || res.Success || res.Error == nil || res.Error.Code != wire.CodePolicyNotGranted || !res.Error.RefusedByHost || res.Error.Kind != wire.KindDenied {
			t.Fatalf("critical call = %+v, %v", res, err)
		}
	})

	t.Run("session ids", func(t *testing.T) {
		local, _ := SplitID(f.ids["a"])
		_, err := c.Session(ctx, local) // the demo app's first session on a, b and c
		if wire.CodeOf(err) != wire.CodeSessionAmbiguous || !strings.Contains(err.Error(), "a, b, c") {
			t.Errorf("ambiguous id: %v", err)
		}
		other, _ := SplitID(f.ids["b2"])
		s, err := c.Session(ctx, other) // on b alone
		if err != nil || s.ID != f.ids["b2"] || s.Host != "b" {
			t.Errorf("unique plain id = %+v, %v", s, err)
		}
		if _, err := c.Session(ctx, "nothing@b"); wire.CodeOf(err) != wire.CodeSessionNotFound {
			t.Errorf("unknown id: %v", err)
		}
		_, err = c.Tools(ctx, local+"@nowhere", hostapi.ToolsRequest{})
		if wire.CodeOf(err) != wire.CodeHostUnavailable || !errors.Is(err, hostapi.ErrHostUnavailable) {
			t.Errorf("unknown host: %v", err)
		}
	})

	t.Run("hosts refuse what is not theirs", func(t *testing.T) {
		nc := rawConn(t, f.cfg)
		subj := newSubjects("lab")
		bLocal, _ := SplitID(f.ids["b2"])
		for _, sess := range []string{f.ids["b2"], bLocal} { // qualified with b; b's id, unknown on a
			eb := rawError(t, nc, subj.op("a", opTools, ""), request{Session: sess})
			if eb.Code != wire.CodeSessionNotFound {
				t.Errorf("a served %s: %+v", sess, eb)
			}
		}
		// A write tool on the read subject: refused with the tool's policy, and not run.
		eb := rawError(t, nc, subj.op("a", opCall, wire.PolicyRead), request{Session: f.ids["a"],
			Call: &hostapi.CallRequest{ToolID: "notes.create", Arguments: jsontext.Value(`{"title":"smuggled"}`)}})
		if eb.Code != wire.CodeClassMismatch || eb.Policy != wire.PolicyWrite {
			t.Errorf("write tool on the read subject: %+v", eb)
		}
		eb = rawError(t, nc, subj.op("a", opBatch, wire.PolicyWrite), request{Session: f.ids["a"], Batch: &hostapi.BatchRequest{Calls: []hostapi.CallRequest{
			{ToolID: "notes.list"}, {ToolID: "app.reset"}}}})
		if eb.Code != wire.CodeClassMismatch || eb.Policy != wire.PolicyCritical {
			t.Errorf("critical tool in a write batch: %+v", eb)
		}
		res, err := c.Call(ctx, f.ids["a"], hostapi.CallRequest{ToolID: "notes.list"}, nil)
		if err != nil || strings.Contains(string(res.Result.Result), "smuggled") {
			t.Errorf("the refused call ran: %+v, %v", res, err)
		}
	})

	t.Run("pairing stays on each host", func(t *testing.T) {
		if _, err := c.IssueInvite(ctx, hostapi.InviteRequest{MaxToolPolicy: wire.PolicyCritical}); wire.CodeOf(err) != wire.CodeNotSupported {
			t.Errorf("invite over the fleet: %v", err)
		}
		if _, err := c.Crashes(ctx, f.ids["a"]); wire.CodeOf(err) != wire.CodeNotSupported {
			t.Errorf("crashes over the fleet: %v", err)
		}
	})
}

// rawConn is a plain NATS connection to the fleet's server, for requests the client
// would not send.
func rawConn(t *testing.T, cfg Config) *nats.Conn {
	t.Helper()
	nc, err := dial(cfg, "raw test client", handlers{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// rawError sends a request and returns the error answer it must get.
// The host's interim messages (alive, progress) are read past: its alive tick may fall
// within any request, however quick.
func rawError(t *testing.T, nc *nats.Conn, subject string, req request) errorBody {
	t.Helper()
	body, _ := json.Marshal(req)
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest(subject, inbox, body); err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	var msg *nats.Msg
	for msg == nil || isInterim(msg) {
		if msg, err = sub.NextMsg(time.Minute); err != nil {
			t.Fatalf("%s: %v", subject, err)
		}
	}
	var eb errorBody
	if msg.Header.Get(kindHeader) != kindError || wire.Unmarshal(msg.Data, &eb) != nil {
		t.Fatalf("%s: answered %s %s", subject, msg.Header.Get(kindHeader), msg.Data)
	}
	return eb
}

func TestHostKilledMidCall(t *testing.T) {
	f := startThreeHosts(t)
	c := dialClient(t, f.cfg)
	waitListing(t, c, 4)

	// A call that takes a minute in the app, with a timeout longer still.
	done := make(chan error, 1)
	started := time.Now()
	go func() {
		_, err := c.Call(context.Background(), f.ids["b"], hostapi.CallRequest{ToolID: "ui.wait", TimeoutMS: 90_000,
			Arguments: jsontext.Value(`{"condition":"exists","textContains":"never shown","timeoutMilliseconds":60000,"pollMilliseconds":1000}`)}, nil)
		done <- err
	}()
	eventually(t, "the call to be in progress on b", func() bool {
		f.b.member.mu.Lock()
		defer f.b.member.mu.Unlock()
		return len(f.b.member.inflight) == 1
	})
	f.b.member.nc.Close() // what NATS sees of a host that dies: its connection ends

	var err error
	select {
	case err = <-done:
	case <-t.Context().Done():
		t.Fatal("the call still waits for a dead host")
	}
	if wire.CodeOf(err) != wire.CodeHostUnavailable || !strings.Contains(err.Error(), "host b stopped answering") {
		t.Fatalf("call to a dead host: %v", err)
	}
	t.Logf("the caller learned of the dead host after %v (call timeout 90 s)", time.Since(started).Round(time.Millisecond))

	// The dead host leaves the listing once its heartbeats stop; the others stay.
	eventually(t, "b to leave the listing", func() bool {
		s, err := c.Sessions(context.Background())
		if err != nil {
			return false
		}
		for _, v := range s.Sessions {
			if v.Host == "b" {
				return false
			}
		}
		return len(s.Sessions) == 2
	})
	// Requests to it fail at once: nobody serves its subjects.
	if _, err := c.Tools(context.Background(), f.ids["b"], hostapi.ToolsRequest{}); wire.CodeOf(err) != wire.CodeHostUnavailable {
		t.Errorf("request to the dead host: %v", err)
	}
}

func TestHostRestarted(t *testing.T) {
	f := startThreeHosts(t)
	c := dialClient(t, f.cfg)
	waitListing(t, c, 4)

	f.b.stopHost() // leaves the fleet: gone from the listing at once
	s, err := c.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range s.Sessions {
		if v.Host == "b" {
			t.Errorf("b's session is still listed after it left: %+v", v)
		}
	}
	f.b.start() // same name, same state, same port: its apps come back
	f.b.waitSession(notesApp)
	f.b.waitSession(otherApp)
	list := waitListing(t, c, 4)
	var id string
	for _, v := range list.Sessions {
		if v.Host == "b" && v.AppID == notesApp {
			id = v.ID
		}
	}
	res, err := c.Call(context.Background(), id, hostapi.CallRequest{ToolID: "notes.list"}, nil)
	if err != nil || !res.Success {
		t.Fatalf("call after b restarted = %+v, %v", res, err)
	}
}

func TestNATSRestarted(t *testing.T) {
	f := startThreeHosts(t)
	c := dialClient(t, f.cfg)
	waitListing(t, c, 4)

	f.nats.restart()
	// Hosts and client reconnect on their own; the hosts announce themselves again.
	eventually(t, "a call through the restarted server", func() bool {
		res, err := c.Call(context.Background(), f.ids["c"], hostapi.CallRequest{ToolID: "notes.list"}, nil)
		return err == nil && res.Success
	})
	waitListing(t, c, 4)
	// A client that connects now sees the whole fleet (a host still reconnecting when it
	// asks appears with its next presence).
	waitListing(t, dialClient(t, f.cfg), 4)
}

func TestNameTaken(t *testing.T) {
	ns := startNATS(t, nil)
	cfg := testConfig(ns)
	startTestHost(t, cfg, "a")
	srv := startIdleHost(t)
	_, err := Join(context.Background(), control.New(srv, control.Options{}), fastMember(cfg, "a"))
	if err == nil || !strings.Contains(err.Error(), `"a" is already in fleet "lab"`) {
		t.Fatalf("second host named a: %v", err)
	}
	// Another fleet on the same server is another name space.
	other := fastMember(cfg, "a")
	other.Fleet = "other"
	m, err := Join(context.Background(), control.New(srv, control.Options{}), other)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
}

func TestEmptyFleet(t *testing.T) {
	ns := startNATS(t, nil)
	c := dialClient(t, testConfig(ns))
	s, err := c.Sessions(context.Background())
	if err != nil || len(s.Sessions) != 0 {
		t.Fatalf("empty fleet: %+v, %v", s, err)
	}
	if _, err := c.Call(context.Background(), "x-001@a", hostapi.CallRequest{ToolID: "t"}, nil); wire.CodeOf(err) != wire.CodeHostUnavailable {
		t.Errorf("call in an empty fleet: %v", err)
	}
}

func TestUnreachableNATS(t *testing.T) {
	ns := startNATS(t, nil)
	cfg := testConfig(ns)
	cfg.URL = "nats://user:s3cret@127.0.0.1:1"
	_, err := Dial(context.Background(), ClientOptions{Config: cfg})
	if !errors.Is(err, hostapi.ErrHostUnavailable) || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("unreachable server: %v", err)
	}
}

// TestPeersLearnedAtJoin: a host that joins learns the hosts already there at once (they
// answer its first presence with theirs), not at their next heartbeat, so that a new
// client that asks every host waits for all of them.
func TestPeersLearnedAtJoin(t *testing.T) {
	ns := startNATS(t, nil)
	cfg := testConfig(ns)
	join := func(name string) *Member {
		srv := startIdleHost(t)
		m, err := Join(context.Background(), control.New(srv, control.Options{}),
			MemberOptions{Config: cfg, Host: name, Heartbeat: time.Hour}) // no heartbeat during the test
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		return m
	}
	join("a")
	b := join("b")
	eventually(t, "b to know a", func() bool { return slices.Equal(b.peerNames(), []string{"a", "b"}) })
	c := dialClient(t, cfg)
	if names := c.dir.names(); !slices.Equal(names, []string{"a", "b"}) {
		t.Fatalf("a new client knows %v", names)
	}
}
