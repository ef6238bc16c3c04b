package recording

import (
	"fmt"
	"testing"
	"time"

	"github.com/ansight-go/ansight/transport"
)

// TestBacklogInBatches: a backlog of more than two batches, queued while the writer is
// held, is written in full and in order — take cuts batches from the queue's array in
// place and recycles none of its parts — and the queue's counts return to zero.
func TestBacklogInBatches(t *testing.T) {
	t.Parallel()
	r := open(t, t.TempDir(), nil)
	const n = 2*maxBatchItems + 500
	r.writeMu.Lock() // the writer waits in its first batch, if it took one
	for i := range n {
		line := fmt.Sprintf(`{"type":"CLIENT_LOG","sentAtUtc":"2026-03-20T10:00:00Z","data":"[Info] line %d"}`, i)
		r.RecordMessage("app-001", transport.MessageText, []byte(line), time.Now())
	}
	r.mu.Lock()
	queued := len(r.queue)
	r.mu.Unlock()
	r.writeMu.Unlock()
	waitIdle(t, r)
	if queued < maxBatchItems {
		t.Fatalf("%d queued behind the held writer, want a backlog of more than a batch", queued)
	}
	recs := all(t, r, Query{Session: "app-001"})
	var logs []Record
	for _, rec := range recs {
		if rec.Kind == KindLog {
			logs = append(logs, rec)
		}
	}
	if len(logs) != n {
		t.Fatalf("%d logs written, %d sent", len(logs), n)
	}
	for i, rec := range logs {
		if want := fmt.Sprintf("[Info] line %d", i); rec.Text != want {
			t.Fatalf("log %d is %q, want %q", i, rec.Text, want)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.nqueued != 0 || r.queued != 0 || r.queueSliced || cap(r.spare) > maxSpareItems {
		t.Errorf("after the backlog: %d items and %d bytes counted queued, sliced %v, spare of %d", r.nqueued, r.queued, r.queueSliced, cap(r.spare))
	}
}
