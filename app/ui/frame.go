package ui

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
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
// image's size. Secure nodes (Node.Secure) are boxed black: what leaves the app in a
// stream — and so in every recording of it — never shows a secure entry, whatever the
// screen draws there.
func Frame(ctx context.Context, s Screen, maxWidth, quality int) (img []byte, width, height int, err error) {
	m, err := s.Render(ctx)
	if err != nil {
		return nil, 0, 0, err
	}
	if m, err = maskSecure(ctx, s, m); err != nil {
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

// maskSecure boxes the secure nodes of the screen's current tree on m, the tree's points
// scaled to m's pixels by the root's bounds (a copy is drawn on; m is returned as it is
// when nothing is secure).
func maskSecure(ctx context.Context, s Screen, m image.Image) (image.Image, error) {
	root, err := s.Capture(ctx)
	if err != nil {
		return nil, fmt.Errorf("ui: capture the screen to mask its secure nodes: %w", err)
	}
	var secure []*Bounds
	var walk func(n *Node, depth int)
	walk = func(n *Node, depth int) {
		if n == nil || depth > maxTreeDepth {
			return
		}
		if n.Secure && n.Bounds != nil {
			secure = append(secure, n.Bounds)
		}
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	walk(root, 1)
	if len(secure) == 0 {
		return m, nil
	}
	b := m.Bounds()
	sx, sy := 1.0, 1.0
	var ox, oy float64
	if root.Bounds != nil && root.Bounds.Width > 0 && root.Bounds.Height > 0 {
		sx, sy = float64(b.Dx())/root.Bounds.Width, float64(b.Dy())/root.Bounds.Height
		ox, oy = root.Bounds.X, root.Bounds.Y
	}
	out := image.NewRGBA(b)
	draw.Draw(out, b, m, b.Min, draw.Src)
	const pad = 2
	for _, r := range secure {
		box := image.Rect(int((r.X-ox)*sx)-pad, int((r.Y-oy)*sy)-pad, int((r.X-ox+r.Width)*sx+0.999)+pad,
			int((r.Y-oy+r.Height)*sy+0.999)+pad).Add(b.Min).Intersect(b)
		draw.Draw(out, box, image.NewUniform(color.Black), image.Point{}, draw.Src)
	}
	return out, nil
}
