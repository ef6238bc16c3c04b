package tools

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"
)

// TestReceive: a transfer announced outside a tool response (annotation.submit) is received
// by the same machinery as a result's: its frames, stalls and the end of the session.
func TestReceive(t *testing.T) {
	t.Parallel()
	t.Run("Complete", func(t *testing.T) {
		hs := newHarness(t, Options{}, nil)
		dir := filepath.Join(t.TempDir(), "annotations")
		data := randomBytes(10_000)
		done := make(chan TransferProgress, 1)
		if err := hs.c.Receive(Incoming{TransferID: id1, FileName: "note.ansightannotation.part", SizeBytes: int64(len(data)), Dir: dir},
			func(p TransferProgress) { done <- p }); err != nil {
			t.Fatal(err)
		}
		if !hs.c.Busy() {
			t.Error("not busy while receiving")
		}
		for _, f := range chunks(id1, data, 4096) {
			hs.send(f)
		}
		p := <-done
		if p.Status != StatusComplete || filepath.Dir(p.Path) != dir || p.ReceivedBytes != int64(len(data)) {
			t.Fatalf("progress %+v", p)
		}
		if b, err := os.ReadFile(p.Path); err != nil || !bytes.Equal(b, data) {
			t.Fatalf("file: %d bytes (%v)", len(b), err)
		}
		if hs.c.Busy() {
			t.Error("busy after the transfer")
		}
		// The id stays taken for a while: a late or replayed announcement is refused.
		if err := hs.c.Receive(Incoming{TransferID: id1, SizeBytes: 1, Dir: dir}, func(TransferProgress) { t.Error("done called") }); !errors.Is(err, ErrTransferInUse) {
			t.Fatalf("same id again: %v", err)
		}
		if err := hs.c.Receive(Incoming{TransferID: "NOT-HEX", SizeBytes: 1, Dir: dir}, func(TransferProgress) { t.Error("done called") }); err == nil {
			t.Fatal("bad id accepted")
		}
	})
	t.Run("Stall", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			hs := newHarness(t, Options{Timeout: 3 * time.Second}, nil)
			done := make(chan TransferProgress, 1)
			start := time.Now()
			if err := hs.c.Receive(Incoming{TransferID: id1, SizeBytes: 100}, func(p TransferProgress) { done <- p }); err != nil {
				t.Fatal(err)
			}
			hs.send(frame(frameChunk, id1, 0, 0, []byte("partial")))
			p := <-done
			if p.Status != StatusFailed || !errors.Is(p.Err, ErrTimeout) || time.Since(start) != 3*time.Second {
				t.Fatalf("progress %+v after %v", p, time.Since(start))
			}
		})
	})
	t.Run("SessionEnds", func(t *testing.T) {
		hs := newHarness(t, Options{}, nil)
		done := make(chan TransferProgress, 1)
		if err := hs.c.Receive(Incoming{TransferID: id2, SizeBytes: 100}, func(p TransferProgress) { done <- p }); err != nil {
			t.Fatal(err)
		}
		hs.c.Close(nil)
		if p := <-done; p.Status != StatusFailed || !errors.Is(p.Err, ErrSessionClosed) {
			t.Fatalf("progress %+v", p)
		}
	})
}
