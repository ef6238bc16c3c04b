package recording

import (
	"fmt"
	"testing"
	"time"

	"github.com/ansight-go/ansight/transport"
)

// TestLastAtDeferred holds what the writer's deferred last_at (lastAtInterval) promises: a
// session's row is written with its first records, its later records move last_at on by
// the next Flush, on their own without one (the writer's tick), and at Close; a deleted
// session's deferred value does not bring its row back.
func TestLastAtDeferred(t *testing.T) {
	dir := t.TempDir()
	r := open(t, dir, nil)
	const id = "s-lastat"
	at := time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)
	log := func(i int) {
		r.RecordMessage(id, transport.MessageText, []byte(fmt.Sprintf(`{"type":"CLIENT_LOG","data":"line %d"}`, i)), at.Add(time.Duration(i)*time.Second))
	}
	lastAt := func() time.Time {
		t.Helper()
		s, err := r.Session(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return s.LastAt
	}
	log(0)
	waitIdle(t, r)
	if got := lastAt(); !got.Equal(at) {
		t.Fatalf("first records: last_at %v, want %v", got, at)
	}
	log(1)
	waitIdle(t, r) // a barrier writes what is deferred
	if got, want := lastAt(), at.Add(time.Second); !got.Equal(want) {
		t.Fatalf("after Flush: last_at %v, want %v", got, want)
	}
	// Without a Flush: the writer's tick writes it (lastAtInterval after the last write).
	log(2)
	want := at.Add(2 * time.Second)
	for deadline := time.Now().Add(time.Minute); !lastAt().Equal(want); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("last_at %v never became %v", lastAt(), want)
		}
	}
	// At Close.
	log(3)
	r.Close()
	r = open(t, dir, nil)
	if got, want := lastAt(), at.Add(3*time.Second); !got.Equal(want) {
		t.Fatalf("after Close: last_at %v, want %v", got, want)
	}
	// A deleted session's deferred value is dropped with it (as a batch defers it).
	r.writeMu.Lock()
	r.lastAt[id] = micros(at.Add(4 * time.Second))
	r.writeMu.Unlock()
	if err := r.Delete(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.lastAtPending(id); ok {
		t.Fatal("a deleted session's last_at is still deferred")
	}
}

// lastAtPending is the session's deferred last_at, if any.
func (r *Recorder) lastAtPending(id string) (int64, bool) {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	v, ok := r.lastAt[id]
	return v, ok
}
