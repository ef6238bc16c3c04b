package host

import (
	"bytes"
	"net/netip"
	"sync"
	"testing"
)

// TestEnrollQueueOrderAndBounds: datagrams come out in order, in batches of at most n; the
// queue refuses datagrams beyond its count or byte bound, and take returns nil once closed.
func TestEnrollQueueOrderAndBounds(t *testing.T) {
	t.Parallel()
	q := newEnrollQueue()
	src := netip.MustParseAddrPort("127.0.0.1:40000")
	for i := range 100 {
		if !q.push(src, []byte{byte(i)}) {
			t.Fatalf("push %d refused", i)
		}
	}
	var got []byte
	var batch []queuedDatagram
	for len(got) < 100 {
		batch = q.take(batch, 7)
		if len(batch) == 0 || len(batch) > 7 {
			t.Fatalf("batch of %d", len(batch))
		}
		for _, d := range batch {
			got = append(got, d.data[0])
		}
	}
	for i, b := range got {
		if int(b) != i {
			t.Fatalf("datagram %d came out as %d", i, b)
		}
	}

	big := make([]byte, maxQueuedBytes/4)
	for range 3 {
		if !q.push(src, big) {
			t.Fatal("a push within the byte bound was refused")
		}
	}
	if q.push(src, big) {
		t.Fatal("a push beyond the byte bound was queued")
	}
	q.take(batch, 1) // frees a quarter
	if !q.push(src, big) {
		t.Fatal("a push after room was made was refused")
	}
	q.take(batch, 10)
	for i := range maxQueuedDatagrams {
		if !q.push(src, nil) {
			t.Fatalf("push %d of %d refused", i, maxQueuedDatagrams)
		}
	}
	if q.push(src, nil) {
		t.Fatal("a push beyond the count bound was queued")
	}

	q.close()
	if q.take(batch, 1) != nil {
		t.Fatal("take on a closed queue returned datagrams")
	}
	if q.push(src, []byte("late")) {
		t.Fatal("a closed queue took a datagram")
	}
}

// TestEnrollQueueWakes: take waits for a push, and returns nil at close.
func TestEnrollQueueWakes(t *testing.T) {
	t.Parallel()
	q := newEnrollQueue()
	taken := make(chan []byte)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(taken)
		var batch []queuedDatagram
		for {
			if batch = q.take(batch, 4); batch == nil {
				return
			}
			for _, d := range batch {
				taken <- d.data
			}
		}
	})
	src := netip.MustParseAddrPort("127.0.0.1:40000")
	for _, word := range []string{"one", "two"} {
		data := []byte(word)
		q.push(src, data)
		data[0] = 'X' // the queue holds a copy: the reader reuses its buffer
		if got := <-taken; !bytes.Equal(got, []byte(word)) {
			t.Fatalf("took %q, want %q", got, word)
		}
	}
	q.close()
	if _, open := <-taken; open {
		t.Fatal("take returned a datagram after close")
	}
	wg.Wait()
}

// TestEnrollQueueRecycles: the buffers of answered datagrams are copied into again, and a
// recycled buffer never shows a later datagram's bytes to the earlier one's holder before
// it was handed back.
func TestEnrollQueueRecycles(t *testing.T) {
	t.Parallel()
	q := newEnrollQueue()
	src := netip.MustParseAddrPort("127.0.0.1:40000")
	q.push(src, []byte("first"))
	batch := q.take(nil, 1)
	first := batch[0].data
	q.push(src, []byte("second"))
	if string(first) != "first" {
		t.Fatalf("a buffer still held was reused: %q", first)
	}
	q.take(batch, 1)
	q.recycle(batch[:1])
	q.push(src, []byte("third"))
	third := q.take(nil, 1)[0].data
	if string(third) != "third" || &third[:1][0] != &batch[0].data[:1][0] {
		t.Fatalf("the recycled buffer was not used: %q", third)
	}
	big := make([]byte, freeBufferSize+1)
	q.push(src, big)
	taken := q.take(nil, 1)
	q.recycle(taken)
	if len(q.free) != 0 {
		t.Fatal("a buffer of another size was kept")
	}
}
