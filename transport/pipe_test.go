package transport

import (
	"context"
	"errors"
	"testing"
)

func TestPipeWriteBlocksWhenFull(t *testing.T) {
	t.Parallel()
	a, b := Pipe(PipeOptions{Queue: 2})
	defer a.Close(StatusNormalClosure, "")
	mustWrite(t, a, MessageText, []byte("1"))
	mustWrite(t, a, MessageText, []byte("2"))

	// The queue is full: a Write waits until its context ends.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.Write(ctx, MessageText, []byte("3")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Write to full queue = %v, want context.Canceled", err)
	}

	// ... or until the reader makes room.
	done := make(chan error)
	go func() { done <- a.Write(context.Background(), MessageText, []byte("3")) }()
	mustRead(t, b, MessageText, []byte("1"))
	if err := <-done; err != nil {
		t.Fatalf("Write after room was made: %v", err)
	}
	mustRead(t, b, MessageText, []byte("2"))
	mustRead(t, b, MessageText, []byte("3"))

	// The other direction has its own queue.
	mustWrite(t, b, MessageText, []byte("x"))
	mustRead(t, a, MessageText, []byte("x"))
}

func TestPipeCloseUnblocksWriters(t *testing.T) {
	t.Parallel()
	for _, closer := range []string{"writer", "reader"} {
		t.Run(closer, func(t *testing.T) {
			a, b := Pipe(PipeOptions{Queue: 1})
			defer a.Close(StatusNormalClosure, "")
			defer b.Close(StatusNormalClosure, "")
			mustWrite(t, a, MessageText, []byte("fills the queue"))
			done := make(chan error)
			go func() { done <- a.Write(context.Background(), MessageText, []byte("blocked")) }()
			if closer == "writer" {
				a.Close(StatusNormalClosure, "")
				if err := <-done; !errors.Is(err, ErrClosed) {
					t.Fatalf("blocked Write = %v, want ErrClosed", err)
				}
				return
			}
			b.Close(StatusGoingAway, "gone")
			if err := <-done; CloseStatus(err) != StatusGoingAway {
				t.Fatalf("blocked Write = %v, want *CloseError 1001", err)
			}
		})
	}
}

func TestPipeCloseDiscardsInbound(t *testing.T) {
	t.Parallel()
	a, b := Pipe(PipeOptions{})
	mustWrite(t, b, MessageText, []byte("never read"))
	a.Close(StatusNormalClosure, "")
	if _, _, err := a.Read(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Read after Close = %v, want ErrClosed (queued messages discarded)", err)
	}
	b.Close(StatusNormalClosure, "")
}

func TestPipeOversizeAfterPeerClose(t *testing.T) {
	t.Parallel()
	// A too-big message still queued when the writer closes is reported as too big.
	a, b := Pipe(PipeOptions{ReadLimit: 4})
	mustWrite(t, a, MessageBinary, []byte("12345"))
	a.Close(StatusNormalClosure, "")
	wantClose(t, b, StatusMessageTooBig, "*")
}
