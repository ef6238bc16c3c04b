package mcpbridge

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/hostapi"
)

// progressInterval is the least time between two progress notifications of one call: the
// specification asks both sides to rate-limit, and a client redraws no faster anyway.
const progressInterval = 100 * time.Millisecond

// progress turns the artifact transfers of one call or batch into notifications/progress
// for the client's progressToken: progress is the bytes received so far over every
// transfer of the call, total their announced sizes. Reports arrive on the host's reading
// goroutine and only record the state; a goroutine of its own sends, at most every
// progressInterval, so that a slow client never stalls the host.
type progress struct {
	notify func(context.Context, *mcp.ProgressNotificationParams) error
	token  any

	mu        sync.Mutex
	transfers map[string]hostapi.Progress // the latest report of each transfer
	order     []string                    // transfer ids in order of arrival
	pending   bool                        // reported since the last notification
	sent      bool                        // a notification went out
	last      int64                       // the progress it reported

	wake chan struct{} // a report arrived (capacity 1)
	end  chan struct{} // the call ended: send what is pending and stop
	done chan struct{} // the sender stopped
}

// startProgress starts reporting for req, or returns nil when the client asked for no
// progress. The caller must call stop.
func startProgress(ctx context.Context, req *mcp.CallToolRequest) *progress {
	if req == nil || req.Session == nil || req.Params == nil {
		return nil
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return nil
	}
	return newProgress(ctx, token, req.Session.NotifyProgress)
}

func newProgress(ctx context.Context, token any, notify func(context.Context, *mcp.ProgressNotificationParams) error) *progress {
	p := &progress{notify: notify, token: token, transfers: map[string]hostapi.Progress{},
		wake: make(chan struct{}, 1), end: make(chan struct{}), done: make(chan struct{})}
	go p.send(ctx)
	return p
}

// report is the backend's progress callback (nil when p is nil, as the backend wants).
func (p *progress) report() func(hostapi.Progress) {
	if p == nil {
		return nil
	}
	return func(r hostapi.Progress) {
		p.mu.Lock()
		if _, ok := p.transfers[r.TransferID]; !ok {
			p.order = append(p.order, r.TransferID)
		}
		p.transfers[r.TransferID] = r
		p.pending = true
		p.mu.Unlock()
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

// stop reports the call's final artifacts (the host may tell the last chunk of a transfer
// after the call has returned), sends what is pending and waits for the sender.
func (p *progress) stop(final []hostapi.Artifact) {
	if p == nil {
		return
	}
	report := p.report()
	for _, a := range final {
		if a.Status == "complete" {
			report(hostapi.Progress{TransferID: a.TransferID, FileName: a.FileName, ReceivedBytes: a.SizeBytes, SizeBytes: a.SizeBytes, Done: true})
		}
	}
	close(p.end)
	<-p.done
}

func (p *progress) send(ctx context.Context) {
	defer close(p.done)
	// notify sends what is new and says whether it sent anything: only a notification sent
	// starts the interval, so that a wake with nothing to report (a transfer announced, no
	// byte received yet) does not hold back the first real one.
	notify := func() bool {
		n, ok := p.next()
		if !ok {
			return false
		}
		// A client that went away makes this fail; the call's own answer reports that.
		_ = p.notify(ctx, n)
		return true
	}
	for {
		select {
		case <-p.end:
			notify()
			return
		case <-ctx.Done():
			return
		case <-p.wake:
		}
		if !notify() {
			continue
		}
		t := time.NewTimer(progressInterval)
		select {
		case <-p.end:
			t.Stop()
			notify()
			return
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// next is the notification for the current state, if it reports more than the last one:
// the specification wants progress to increase with every notification.
func (p *progress) next() (*mcp.ProgressNotificationParams, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.pending {
		return nil, false
	}
	p.pending = false
	var received, total int64
	unknown, done := false, 0
	for _, id := range p.order {
		r := p.transfers[id]
		received += r.ReceivedBytes
		total += r.SizeBytes
		unknown = unknown || r.SizeBytes <= 0
		if r.Done {
			done++
		}
	}
	// Nothing received yet (a transfer just announced) is no progress to report.
	if received == 0 || p.sent && received <= p.last {
		return nil, false
	}
	p.sent, p.last = true, received
	n := &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: float64(received)}
	if !unknown {
		n.Total = float64(total)
	}
	cur := p.transfers[p.order[len(p.order)-1]]
	switch {
	case len(p.order) == 1:
		n.Message = "receiving " + cur.FileName
	default:
		n.Message = fmt.Sprintf("receiving %d files (%d done)", len(p.order), done)
	}
	return n, true
}
