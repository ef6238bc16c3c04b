package transport

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"testing"
	"testing/iotest"
)

// TestReadMessage: messages of every size around the scratch chunks come back whole, at
// their exact length (frame-sized ones in a recyclable buffer), whether the reader returns them in one piece or a byte at a time;
// a read error is returned as it is.
func TestReadMessage(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 385, scratchChunk - 1, scratchChunk, scratchChunk + 1, 65592, 8*scratchChunk + 3, 1 << 20} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			t.Parallel()
			want := make([]byte, n)
			for i := range want {
				want[i] = byte(i * 7)
			}
			for _, r := range []io.Reader{bytes.NewReader(want), iotest.HalfReader(bytes.NewReader(want))} {
				got, err := readMessage(r, true)
				wantCap := n
				if n > scratchChunk && n <= recycledCap {
					wantCap = recycledCap // frame-sized: a buffer Recycle can keep
				}
				if err != nil || !bytes.Equal(got, want) || cap(got) != wantCap && n > 0 {
					t.Fatalf("got %d bytes (cap %d), err %v", len(got), cap(got), err)
				}
			}
		})
	}
	boom := errors.New("boom")
	if _, err := readMessage(io.MultiReader(bytes.NewReader(make([]byte, 40000)), iotest.ErrReader(boom)), true); !errors.Is(err, boom) {
		t.Fatalf("read error: %v", err)
	}
}

// TestRecycle: a recycled frame-sized binary message is reused by a later read, and what
// the later read returns is that message's own bytes; other sizes are not kept, and a text
// message (which callers keep, as results) is never oversized.
func TestRecycle(t *testing.T) {
	frame := bytes.Repeat([]byte{1}, 65592)
	a, err := readMessage(bytes.NewReader(frame), true)
	if err != nil || cap(a) != recycledCap {
		t.Fatalf("cap %d, err %v", cap(a), err)
	}
	if text, _ := readMessage(bytes.NewReader(frame), false); cap(text) != len(frame) {
		t.Fatalf("a text message of a frame's size: cap %d, want its length", cap(text))
	}
	Recycle(a)
	Recycle(make([]byte, 100)) // ignored
	next := bytes.Repeat([]byte{2}, 40000)
	b, err := readMessage(bytes.NewReader(next), true)
	if err != nil || !bytes.Equal(b, next) {
		t.Fatalf("after recycling: %d bytes, err %v", len(b), err)
	}
}
