package fanout

import "testing"

func TestHub(t *testing.T) {
	t.Parallel()
	var h Hub[int]
	full, _ := h.Subscribe(1)
	open, unsubscribe := h.Subscribe(4)
	h.Publish(1)
	h.Publish(2) // full has no room: it misses 2, open does not
	if v := <-full; v != 1 {
		t.Errorf("full got %d, want 1", v)
	}
	if a, b := <-open, <-open; a != 1 || b != 2 {
		t.Errorf("open got %d, %d", a, b)
	}
	unsubscribe()
	unsubscribe() // twice is harmless
	if _, ok := <-open; ok {
		t.Error("an ended subscription's channel is open")
	}
	h.Close()
	if _, ok := <-full; ok {
		t.Error("Close left a channel open")
	}
	late, _ := h.Subscribe(0)
	if _, ok := <-late; ok {
		t.Error("a subscription after Close is open")
	}
	h.Publish(3) // no subscriber: nothing happens
}
