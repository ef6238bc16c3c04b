package host

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// TestLiveFrames: well-formed ASJP frames reach Options.OnFrame with the session id;
// malformed ones and other binary messages are dropped without ending the session.
func TestLiveFrames(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []wire.ASJPFrame
	var ids []string
	h := newHarness(t, func(o *Options) {
		o.OnFrame = func(id string, f wire.ASJPFrame) {
			mu.Lock()
			defer mu.Unlock()
			ids, got = append(ids, id), append(got, f)
		}
	})
	conn := h.connect(t, newApp("com.example.frames"))
	good, err := wire.AppendASJP(nil, wire.ASJPFrame{Format: wire.ASJPFormatJPEG, Quality: 60, Width: 3, Height: 2,
		CapturedAt: time.UnixMilli(1_800_000_000_000), JPEG: []byte{0xff, 0xd8, 0xff, 0xd9}})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range [][]byte{append([]byte("ASJP"), make([]byte, 40)...), []byte("XXXX binary"), good} {
		if err := conn.Write(context.Background(), transport.MessageBinary, m); err != nil {
			t.Fatal(err)
		}
	}
	// The control reply proves the reader went past the frames.
	if r := control(t, conn, sdkLog); !strings.Contains(r, `"success":true`) {
		t.Fatalf("control after frames: %s", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].Width != 3 || got[0].Quality != 60 || len(got[0].JPEG) != 4 || !strings.HasPrefix(ids[0], "com-example-frames") {
		t.Fatalf("frames %+v for %v", got, ids)
	}
}
