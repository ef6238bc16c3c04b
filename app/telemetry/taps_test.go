package telemetry

import (
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/wire/session"
)

// TestTapsSentUnlessSecure: a tap goes out as the tree it landed on, then its touch, in
// the official messages; a tap on a secure node sends its tree and keeps its touch.
func TestTapsSentUnlessSecure(t *testing.T) {
	t.Parallel()
	tel := New(Options{MetricsInterval: -1})
	link := newLink()
	detach := tel.Attach(link, session.JpegCapturePolicy{Mode: "host"})
	defer detach()
	at := time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)
	tree := []byte(`{"format":"ansight.native.visual-tree.compact.v2","snapshotId":"native:3:ab","types":["Window"],"root":{"id":"r","typeId":0}}`)
	tel.RecordTap(at, 50, 70, 100, 200, true, tree)
	tel.RecordTap(at.Add(time.Second), 50, 115, 100, 200, false, tree)
	link.await(t, "three messages", func() bool { return len(link.texts) >= 3 })
	want := []string{
		`{"type":"CLIENT_VISUAL_TREE","capturedAtUtc":"2026-03-20T10:00:00.000Z","source":"sdk.touchCapture","captureTrigger":"touch","touchAction":"down","touchCapturedAtUtc":"2026-03-20T10:00:00.000Z","snapshotId":"native:3:ab","payload":` + string(tree) + `}`,
		`{"type":"CLIENT_VISUAL_TREE","capturedAtUtc":"2026-03-20T10:00:01.000Z"`,
		`{"type":"CLIENT_TOUCH_INPUT","schema":"ansight.touches.v1","t0":"2026-03-20T10:00:01.000Z","space":"w","unit":"pt","surface":[100,200,1],"rows":[[0,0,0,50,115],[0,2,0,50,115]]}`,
	}
	for i, w := range want {
		if !strings.HasPrefix(link.texts[i], w) {
			t.Errorf("message %d = %s\nwant %s", i, link.texts[i], w)
		}
	}
	if s := tel.Stats(); s.TapsMasked != 1 || s.TapsSent != 3 {
		t.Errorf("stats %+v", s)
	}
}

// TestTreeAfterTapSent: the tree after a tap goes out as the official SDKs send the tree
// of a touch up.
func TestTreeAfterTapSent(t *testing.T) {
	t.Parallel()
	tel := New(Options{MetricsInterval: -1})
	link := newLink()
	detach := tel.Attach(link, session.JpegCapturePolicy{Mode: "host"})
	defer detach()
	at := time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)
	tree := []byte(`{"format":"ansight.native.visual-tree.compact.v2","snapshotId":"native:4:cd","types":["Window"],"root":{"id":"r","typeId":0}}`)
	tel.RecordTapUp(at, tree)
	link.await(t, "one message", func() bool { return len(link.texts) >= 1 })
	want := `{"type":"CLIENT_VISUAL_TREE","capturedAtUtc":"2026-03-20T10:00:00.000Z","source":"sdk.touchCapture","captureTrigger":"touch","touchAction":"up","touchCapturedAtUtc":"2026-03-20T10:00:00.000Z","snapshotId":"native:4:cd","payload":` + string(tree) + `}`
	if link.texts[0] != want {
		t.Errorf("message = %s\nwant %s", link.texts[0], want)
	}
}
