package recording

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/ansight-go/ansight/transport"
)

// TestIntakeWritesInBatches checks that telemetry does not wake the writer message by
// message: what arrives within commitInterval is committed at once when the interval
// ends, a full batch is written without waiting, and Flush does not wait either.
func TestIntakeWritesInBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := open(t, t.TempDir(), nil)
		lines := officialLines(t)
		changed := r.Changed()
		start := time.Now()
		for i := range 100 {
			r.RecordMessage("s1", transport.MessageText, lines[i%len(lines)], time.Now())
			time.Sleep(commitInterval / 200)
		}
		synctest.Wait()
		select {
		case <-changed:
			t.Fatalf("a commit %v after the first message, before the interval ended", time.Since(start))
		default:
		}
		if u := r.Usage(); u.Records != 0 || u.Queued != 100 {
			t.Fatalf("before the interval: %d records, %d queued; want 0 and 100", u.Records, u.Queued)
		}
		time.Sleep(commitInterval - time.Since(start))
		synctest.Wait()
		<-changed
		if u := r.Usage(); u.Records < 100 || u.Queued != 0 {
			t.Fatalf("after the interval: %d records, %d queued; want every message written", u.Records, u.Queued)
		}

		// A full batch does not wait for the interval.
		changed = r.Changed()
		for i := range maxBatchItems {
			r.RecordMessage("s1", transport.MessageText, lines[i%len(lines)], time.Now())
		}
		synctest.Wait()
		select {
		case <-changed:
		default:
			t.Fatal("a full batch waited for the interval")
		}

		// Neither does Flush.
		r.RecordMessage("s1", transport.MessageText, lines[0], time.Now())
		before := time.Now()
		if err := r.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(before); d != 0 {
			t.Fatalf("Flush waited %v", d)
		}
	})
}
