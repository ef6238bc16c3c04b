package transport

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// TestReadMessage: messages of every size around the scratch chunks come back whole, at
// their exact length, whether the reader returns them in one piece or a byte at a time;
// a read error is returned as it is.
func TestReadMessage(t *testing.T) {
	for _, n := range []int{0, 1, 385, scratchChunk - 1, scratchChunk, scratchChunk + 1, 65592, 8*scratchChunk + 3, 1 << 20} {
		want := make([]byte, n)
		for i := range want {
			want[i] = byte(i * 7)
		}
		for _, r := range []io.Reader{bytes.NewReader(want), iotest.HalfReader(bytes.NewReader(want))} {
			got, err := readMessage(r)
			if err != nil || !bytes.Equal(got, want) || len(got) != cap(got) && n > 0 {
				t.Fatalf("%d bytes: got %d bytes (cap %d), err %v", n, len(got), cap(got), err)
			}
		}
	}
	boom := errors.New("boom")
	if _, err := readMessage(io.MultiReader(bytes.NewReader(make([]byte, 40000)), iotest.ErrReader(boom))); !errors.Is(err, boom) {
		t.Fatalf("read error: %v", err)
	}
}
