package telemetry

import (
	"context"
	"time"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/session"
)

// FrameSource renders the app's screen as one JPEG frame of the live screen stream, at most
// maxWidth pixels wide (no limit when maxWidth <= 0) at JPEG quality 1..100, and returns the
// frame's size. It is a function rather than a ui.Screen so that telemetry depends on no UI
// package: ui.FrameSource adapts a ui.Screen, and an app that renders its screen otherwise
// gives its own.
type FrameSource func(ctx context.Context, maxWidth, quality int) (jpeg []byte, width, height int, err error)

// streamScreen renders Options.Frames and sends it as ASJP frames at the policy's interval,
// quality and width (the official SDKs' defaults where it says nothing). Like theirs, the
// stream is paced by backpressure: the next capture waits for the previous frame to be
// sent, then for the interval. A frame that fails to render is skipped.
func (t *Telemetry) streamScreen(ctx context.Context, link Link, p session.JpegCapturePolicy) {
	interval := time.Duration(p.IntervalMilliseconds) * time.Millisecond
	if interval <= 0 {
		interval = DefaultFrameInterval
	}
	interval = max(interval, 50*time.Millisecond) // 20 frames a second at most
	quality := p.Quality
	if quality <= 0 || quality > 100 {
		quality = DefaultFrameQuality
	}
	width := p.MaxWidth
	if width <= 0 {
		width = DefaultFrameMaxWidth
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	var buf []byte
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		at := time.Now()
		img, w, h, err := t.opts.Frames(ctx, width, quality)
		if err == nil {
			buf, err = wire.AppendASJP(buf[:0], wire.ASJPFrame{Format: wire.ASJPFormatJPEG, Quality: uint8(quality),
				CapturedAt: at, Width: int32(w), Height: int32(h), JPEG: img})
		}
		if err == nil && send(ctx, link, transport.MessageBinary, buf) == nil {
			t.framesSent.Add(1)
		}
		timer.Reset(interval)
	}
}
