package bpool

import "testing"

func TestPool(t *testing.T) {
	t.Parallel()
	p := New(16, 64)
	b := p.Get()
	if len(*b) != 0 || cap(*b) != 16 {
		t.Fatalf("new buffer: len %d cap %d", len(*b), cap(*b))
	}
	*b = append(*b, "message"...)
	p.Put(b)
	// The pool may drop what it holds at any time (sync.Pool); what it returns is empty.
	if c := p.Get(); len(*c) != 0 || cap(*c) < 16 {
		t.Fatalf("recycled buffer: len %d cap %d", len(*c), cap(*c))
	}
}

// A buffer above the bound is not kept: Put drops it.
func TestPoolDropsHugeBuffers(t *testing.T) {
	t.Parallel()
	p := New(16, 64)
	huge := make([]byte, 0, 65)
	for range 100 {
		p.Put(&huge)
		if b := p.Get(); cap(*b) > 64 {
			t.Fatalf("a %d-byte buffer was kept", cap(*b))
		}
	}
}
