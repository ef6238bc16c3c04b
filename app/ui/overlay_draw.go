package ui

import (
	"image"
	"image/draw"
	"math"
)

// drawOverlays draws overlays (oldest first, so the newest is on top) onto a copy of img.
// Rectangles are in the points of the latest capture's root frame (points), mapped onto
// the image's pixels; without a capture they are taken as pixels. Edges are antialiased
// by the pixel's distance to the rounded rectangle.
func drawOverlays(img image.Image, overlays []*overlay, points *Bounds) image.Image {
	b := img.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(dst, dst.Bounds(), img, b.Min, draw.Src)
	scale, ox, oy := 1.0, 0.0, 0.0
	if points != nil && points.Width > 0 {
		scale = float64(b.Dx()) / points.Width
		ox, oy = points.X, points.Y
	}
	for _, ov := range overlays {
		for _, r := range ov.rects {
			paintRect(dst, rectPx{
				x: (r.X - ox) * scale, y: (r.Y - oy) * scale, w: r.Width * scale, h: r.Height * scale,
				radius: ov.style.cornerRadius * scale, stroke: ov.style.strokeWidth * scale,
			}, ov.style.stroke, ov.style.fill)
		}
	}
	return dst
}

// rectPx is a rounded rectangle in pixels.
type rectPx struct{ x, y, w, h, radius, stroke float64 }

// paintRect fills (when fill is set) and strokes (when stroke > 0) a rounded rectangle,
// centred on its edge, blending source-over.
func paintRect(dst *image.RGBA, r rectPx, stroke rgba, fill *rgba) {
	half := r.stroke / 2
	pad := half + 1
	bounds := dst.Bounds()
	x0 := max(bounds.Min.X, int(math.Floor(r.x-pad)))
	y0 := max(bounds.Min.Y, int(math.Floor(r.y-pad)))
	x1 := min(bounds.Max.X, int(math.Ceil(r.x+r.w+pad)))
	y1 := min(bounds.Max.Y, int(math.Ceil(r.y+r.h+pad)))
	radius := min(r.radius, r.w/2, r.h/2)
	cx, cy := r.x+r.w/2, r.y+r.h/2
	for py := y0; py < y1; py++ {
		for px := x0; px < x1; px++ {
			d := roundedDistance(float64(px)+0.5-cx, float64(py)+0.5-cy, r.w/2, r.h/2, radius)
			if fill != nil {
				blend(dst, px, py, *fill, clamp01(0.5-d))
			}
			if r.stroke > 0 {
				blend(dst, px, py, stroke, clamp01(half+0.5-math.Abs(d)))
			}
		}
	}
}

// roundedDistance is the signed distance from a point (relative to the centre) to a
// rectangle of half-size hw×hh with corner radius rad: negative inside.
func roundedDistance(x, y, hw, hh, rad float64) float64 {
	qx, qy := math.Abs(x)-hw+rad, math.Abs(y)-hh+rad
	outside := math.Hypot(max(qx, 0), max(qy, 0))
	inside := min(max(qx, qy), 0)
	return outside + inside - rad
}

func clamp01(v float64) float64 { return max(0, min(1, v)) }

// blend draws colour c with coverage over the pixel (source-over, premultiplied).
func blend(dst *image.RGBA, x, y int, c rgba, coverage float64) {
	a := float64(c.a) / 255 * coverage
	if a <= 0 {
		return
	}
	i := dst.PixOffset(x, y)
	p := dst.Pix[i : i+4 : i+4]
	inv := 1 - a
	p[0] = uint8(math.Round(float64(c.r)*a + float64(p[0])*inv))
	p[1] = uint8(math.Round(float64(c.g)*a + float64(p[1])*inv))
	p[2] = uint8(math.Round(float64(c.b)*a + float64(p[2])*inv))
	p[3] = uint8(math.Round(255*a + float64(p[3])*inv))
}
