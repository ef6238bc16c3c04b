package mcpbridge

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// TestProgressNotifications: with a progressToken, a call's and a batch's transfers become
// notifications/progress, increasing, ending at the total; without one, nothing is sent.
func TestProgressNotifications(t *testing.T) {
	t.Parallel()
	f := oneSession(t)
	c := f.catalogs["s1"]
	shot := writePNG(t, f.dir, 200, 100)
	c.run["notes.list"] = func(jsontext.Value) (jsontext.Value, *wire.Error) { return jsontext.Value(`{}`), nil }
	c.artifacts["notes.list"] = func() []hostapi.Artifact { return []hostapi.Artifact{pngArtifact(shot)} }
	size := pngArtifact(shot).SizeBytes

	var mu sync.Mutex
	got := map[any][]*mcp.ProgressNotificationParams{}
	arrived := make(chan struct{}, 16)
	br := New(f, Options{})
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got[req.Params.ProgressToken] = append(got[req.Params.ProgressToken], req.Params)
			mu.Unlock()
			arrived <- struct{}{}
		},
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := br.Server().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := client.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cs.Close(); ss.Wait() }()

	call := func(token any, name string, args map[string]any) {
		t.Helper()
		p := &mcp.CallToolParams{Name: name, Arguments: args}
		if token != nil {
			p.SetProgressToken(token)
		}
		if res, err := cs.CallTool(t.Context(), p); err != nil || res.IsError {
			t.Fatalf("%v %+v", err, res)
		}
	}
	// waitFinal waits for the notification that reports total bytes for token.
	waitFinal := func(token any, total int64) []*mcp.ProgressNotificationParams {
		t.Helper()
		for {
			mu.Lock()
			list := got[token]
			mu.Unlock()
			if n := len(list); n > 0 && list[n-1].Progress == float64(total) {
				return list
			}
			select {
			case <-arrived:
			case <-t.Context().Done():
				t.Fatalf("%v: notifications %+v", token, list)
			}
		}
	}
	check := func(list []*mcp.ProgressNotificationParams, total int64, message string) {
		t.Helper()
		for i, n := range list {
			if i > 0 && n.Progress <= list[i-1].Progress || n.Total != float64(total) || !strings.Contains(n.Message, message) {
				t.Fatalf("notification %d: %+v", i, n)
			}
		}
	}

	call("one", ToolCallAppTool, map[string]any{"toolId": "notes.list"})
	check(waitFinal("one", size), size, "receiving shot-200x100.png")
	call(7, ToolCallAppTools, map[string]any{"calls": []any{map[string]any{"toolId": "notes.list"}, map[string]any{"toolId": "notes.list"}}})
	check(waitFinal(float64(7), 2*size), 2*size, "receiving 2 files") // a number token reads back as float64

	call(nil, ToolCallAppTool, map[string]any{"toolId": "notes.list"})
	call("after", ToolListSessions, nil) // a marker: notifications are delivered in order
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("notifications for tokens %v", got)
	}
}

// TestProgressRateLimit: however fast transfers report, notifications go out at most every
// progressInterval, plus the final one.
func TestProgressRateLimit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p, sentSoFar := recordProgress(t)
		report := p.report()
		const total = 1000
		for i := 1; i <= total; i++ {
			report(hostapi.Progress{TransferID: "t", FileName: "f.bin", ReceivedBytes: int64(i), SizeBytes: total, Done: i == total})
			time.Sleep(time.Millisecond) // one second in all
		}
		p.stop(nil)
		sent := sentSoFar()
		if n := len(sent); n < 2 || n > int(time.Second/progressInterval)+2 {
			t.Fatalf("%d notifications in 1s", n)
		}
		if last := sent[len(sent)-1]; last.Progress != total || last.Total != total {
			t.Fatalf("last %+v", last)
		}
		for i := 1; i < len(sent); i++ {
			if sent[i].Progress <= sent[i-1].Progress {
				t.Fatalf("not increasing: %v then %v", sent[i-1].Progress, sent[i].Progress)
			}
		}
	})
}

// TestProgressFinal: the host may tell the last chunk of a transfer after the call has
// returned; the call's artifacts then make the last notification, at the total.
func TestProgressFinal(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p, sentSoFar := recordProgress(t)
		p.report()(hostapi.Progress{TransferID: "t", FileName: "f.bin", ReceivedBytes: 300, SizeBytes: 1000})
		synctest.Wait()
		p.stop([]hostapi.Artifact{
			{TransferID: "t", FileName: "f.bin", SizeBytes: 1000, Status: "complete"},
			{TransferID: "u", FileName: "g.bin", SizeBytes: 50, Status: "failed"}, // not reported as received
		})
		sent := sentSoFar()
		if len(sent) != 2 || sent[0].Progress != 300 || sent[1].Progress != 1000 || sent[1].Total != 1000 {
			t.Fatalf("%+v", sent)
		}
	})
}

// TestProgressAfterAnnounce: a transfer announced with nothing received yet sends no
// notification and must not start the interval, so the first bytes are reported at once
// (a 16 MB transfer on loopback ends within the interval, and a notification written just
// before the response can be dropped by the client, so waiting lost every one).
func TestProgressAfterAnnounce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p, sent := recordProgress(t)
		report := p.report()
		report(hostapi.Progress{TransferID: "t", FileName: "f.bin", SizeBytes: 1000})
		synctest.Wait()
		report(hostapi.Progress{TransferID: "t", FileName: "f.bin", ReceivedBytes: 400, SizeBytes: 1000})
		synctest.Wait() // no time passes: the notification must not wait for the interval
		if got := sent(); len(got) != 1 || got[0].Progress != 400 {
			t.Fatalf("after the first bytes: %+v", got)
		}
		p.stop(nil)
	})
}

// recordProgress is a progress for token "tok" whose notifications are kept; sent returns
// those so far.
func recordProgress(t *testing.T) (*progress, func() []*mcp.ProgressNotificationParams) {
	var mu sync.Mutex
	var sent []*mcp.ProgressNotificationParams
	p := newProgress(t.Context(), "tok", func(_ context.Context, n *mcp.ProgressNotificationParams) error {
		mu.Lock()
		sent = append(sent, n)
		mu.Unlock()
		return nil
	})
	return p, func() []*mcp.ProgressNotificationParams {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(sent)
	}
}
