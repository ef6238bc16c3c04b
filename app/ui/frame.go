package ui

import (
	"bytes"
	"context"
	"fmt"
	"image/jpeg"
)

// FrameSource returns s as the frame source of app/telemetry's live screen stream
// (telemetry.Options.Frames): each frame is [Frame] of s.
func FrameSource(s Screen) func(ctx context.Context, maxWidth, quality int) ([]byte, int, int, error) {
	return func(ctx context.Context, maxWidth, quality int) ([]byte, int, int, error) {
		return Frame(ctx, s, maxWidth, quality)
	}
}

// Frame renders the screen as a JPEG for a live screen stream, scaled down to at most
// maxWidth pixels wide (no scaling when maxWidth <= 0) at quality 1..100, and returns the
// image's size.
func Frame(ctx context.Context, s Screen, maxWidth, quality int) (img []byte, width, height int, err error) {
	m, err := s.Render(ctx)
	if err != nil {
		return nil, 0, 0, err
	}
	b := m.Bounds()
	if b.Dx() <= 0 || b.Dy() <= 0 || b.Dx() > maxScreenshotSide || b.Dy() > maxScreenshotSide {
		return nil, 0, 0, fmt.Errorf("ui: the screen rendered a %dx%d image", b.Dx(), b.Dy())
	}
	if maxWidth > 0 && b.Dx() > maxWidth {
		m = scaleToWidth(m, maxWidth)
		b = m.Bounds()
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: clampOr(&quality, defaultJPEGQuality, 1, 100)}); err != nil {
		return nil, 0, 0, err
	}
	return buf.Bytes(), b.Dx(), b.Dy(), nil
}
