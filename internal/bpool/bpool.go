package bpool

import "sync"

// Pool is a pool of buffers that start at one capacity and are kept up to another.
type Pool struct {
	pool    sync.Pool
	initial int
	max     int
}

// New returns a pool whose new buffers have capacity initial, and which keeps buffers up
// to capacity max: one huge message must not pin its memory for the life of the process.
func New(initial, max int) *Pool { return &Pool{initial: initial, max: max} }

// Get returns an empty buffer.
func (p *Pool) Get() *[]byte {
	if b, ok := p.pool.Get().(*[]byte); ok {
		*b = (*b)[:0]
		return b
	}
	b := make([]byte, 0, p.initial)
	return &b
}

// Put gives b back; b must not be used afterwards.
func (p *Pool) Put(b *[]byte) {
	if cap(*b) <= p.max {
		p.pool.Put(b)
	}
}
