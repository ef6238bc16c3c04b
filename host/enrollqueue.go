package host

import (
	"net/netip"
	"sync"
)

// Bounds of the enrollment queue: a burst of 10,000 enrollment datagrams (about 400 bytes
// each) fits with room to spare, and what a flood of large datagrams can make the host hold
// stays a few MiB.
const (
	maxQueuedDatagrams = 32768
	maxQueuedBytes     = 8 << 20
	// queuedOverhead is what a queued datagram costs beside its bytes, counted against
	// maxQueuedBytes so that many tiny datagrams are bounded too.
	queuedOverhead = 64
)

// queuedDatagram is one enrollment datagram the reader admitted.
type queuedDatagram struct {
	src  netip.AddrPort
	data []byte
}

// enrollQueue carries admitted datagrams from the enrollment reader to the goroutine that
// answers them, so that the reader, which only reads, checks the rate limit and queues,
// drains the socket's receive buffer while answers (and the pairing store) take their
// time: a burst the socket's buffer could not hold waits here instead of being dropped by
// the kernel. It is a FIFO: the rate limit has already held every sender to its share.
type enrollQueue struct {
	mu     sync.Mutex
	items  []queuedDatagram
	head   int // items[head:] are queued
	bytes  int
	ready  chan struct{} // signalled when items are added or the queue closes
	closed bool
	// free holds the buffers of answered datagrams for the reader to copy into: a reader
	// that does not allocate is never made to help the collector, which, during a flood
	// (when the answerer allocates fast), would keep it from draining the socket.
	free [][]byte
}

// Buffers of answered datagrams kept for reuse: enough for a few batches, of the size
// most enrollment datagrams fit.
const (
	maxFreeBuffers = 4 * maxEnrollBatch
	freeBufferSize = 1 << 10
)

func newEnrollQueue() *enrollQueue { return &enrollQueue{ready: make(chan struct{}, 1)} }

// push copies data into the queue; it reports false, dropping it, when the queue is full
// or closed.
func (q *enrollQueue) push(src netip.AddrPort, data []byte) bool {
	cost := len(data) + queuedOverhead
	q.mu.Lock()
	if q.closed || len(q.items)-q.head >= maxQueuedDatagrams || q.bytes+cost > maxQueuedBytes {
		q.mu.Unlock()
		return false
	}
	var buf []byte
	if n := len(q.free); n > 0 && len(data) <= freeBufferSize {
		buf, q.free = q.free[n-1], q.free[:n-1]
	} else {
		buf = make([]byte, 0, max(len(data), freeBufferSize))
	}
	q.items = append(q.items, queuedDatagram{src: src, data: append(buf[:0], data...)})
	q.bytes += cost
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return true
}

// take moves up to n queued datagrams into buf and returns it, waiting while the queue is
// empty; it returns nil once the queue is closed.
func (q *enrollQueue) take(buf []queuedDatagram, n int) []queuedDatagram {
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return nil
		}
		if avail := len(q.items) - q.head; avail > 0 {
			k := min(n, avail)
			buf = append(buf[:0], q.items[q.head:q.head+k]...)
			clear(q.items[q.head : q.head+k])
			q.head += k
			for _, d := range buf {
				q.bytes -= len(d.data) + queuedOverhead
			}
			switch {
			case q.head == len(q.items) && cap(q.items) > 1024:
				q.items, q.head = nil, 0 // a burst's backing array goes with it
			case q.head == len(q.items):
				q.items, q.head = q.items[:0], 0
			case q.head > len(q.items)/2:
				kept := copy(q.items, q.items[q.head:])
				clear(q.items[kept:])
				q.items, q.head = q.items[:kept], 0
			}
			q.mu.Unlock()
			return buf
		}
		q.mu.Unlock()
		<-q.ready
	}
}

// recycle hands back the buffers of datagrams taken and answered.
func (q *enrollQueue) recycle(batch []queuedDatagram) {
	q.mu.Lock()
	for _, d := range batch {
		if cap(d.data) == freeBufferSize && len(q.free) < maxFreeBuffers {
			q.free = append(q.free, d.data)
		}
	}
	q.mu.Unlock()
}

// close ends take; what is still queued is dropped.
func (q *enrollQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.items, q.head, q.bytes = nil, 0, 0
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}
