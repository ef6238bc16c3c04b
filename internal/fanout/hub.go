package fanout

import "sync"

// Hub fans values out to its subscribers. The zero value is ready to use; its methods are
// safe for concurrent use.
type Hub[T any] struct {
	mu     sync.Mutex
	subs   map[chan T]struct{}
	closed bool
}

// Subscribe returns a channel of the values published from now on, buffered to hold buffer
// values (64 when not positive), and a function that ends the subscription and closes the
// channel. The channel is closed by Close too; after Close, it is closed at once.
func (h *Hub[T]) Subscribe(buffer int) (<-chan T, func()) {
	if buffer <= 0 {
		buffer = 64
	}
	ch := make(chan T, buffer)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		close(ch)
		return ch, func() {}
	}
	if h.subs == nil {
		h.subs = make(map[chan T]struct{})
	}
	h.subs[ch] = struct{}{}
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if _, ok := h.subs[ch]; ok {
				delete(h.subs, ch)
				close(ch)
			}
		})
	}
}

// Publish sends v to every subscriber with room for it; the others miss it.
func (h *Hub[T]) Publish(v T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- v:
		default:
		}
	}
}

// Close ends every subscription; later ones are closed at once.
func (h *Hub[T]) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for ch := range h.subs {
		close(ch)
	}
	h.subs = nil
}
