package ui

import (
	"image"
	"image/draw"
	"math"
)

// scaleToWidth scales img down to width pixels (fewer than it has), keeping its aspect
// ratio. Every destination pixel is the area-weighted average of the source pixels it
// covers: for shrinking, that is as sharp as a downscale gets without ringing, and it
// keeps the SDK free of an imaging dependency.
func scaleToWidth(img image.Image, width int) *image.RGBA {
	b := img.Bounds()
	height := max(1, int(math.Round(float64(b.Dy())*float64(width)/float64(b.Dx()))))
	src, ok := img.(*image.RGBA)
	if !ok || src.Bounds().Min != (image.Point{}) {
		src = image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
		draw.Draw(src, src.Bounds(), img, b.Min, draw.Src)
	}
	sw, sh := src.Bounds().Dx(), src.Bounds().Dy()
	cols, rows := areaTaps(sw, width), areaTaps(sh, height)

	// Horizontal pass into a float buffer of sh rows × width columns × 4 channels (the
	// channels are premultiplied, so averaging them is correct), then the vertical pass.
	tmp := make([]float32, sh*width*4)
	for y := 0; y < sh; y++ {
		row := src.Pix[y*src.Stride:]
		for x, taps := range cols {
			var acc [4]float32
			for _, t := range taps {
				p := row[t.i*4 : t.i*4+4]
				for c := range acc {
					acc[c] += float32(p[c]) * t.w
				}
			}
			copy(tmp[(y*width+x)*4:], acc[:])
		}
	}
	dst := image.NewRGBA(image.Rect(0, 0, width, height))
	for y, taps := range rows {
		for x := 0; x < width; x++ {
			var acc [4]float32
			for _, t := range taps {
				p := tmp[(t.i*width+x)*4:]
				for c := range acc {
					acc[c] += p[c] * t.w
				}
			}
			o := dst.Pix[y*dst.Stride+x*4:]
			for c, v := range acc {
				o[c] = uint8(min(255, max(0, v+0.5)))
			}
		}
	}
	return dst
}

// tap is one source index and its weight in a destination pixel.
type tap struct {
	i int
	w float32
}

// areaTaps returns, for each of dst destination pixels along one axis of src source
// pixels (dst ≤ src), the source pixels it covers and their weights (summing to 1).
func areaTaps(src, dst int) [][]tap {
	scale := float64(src) / float64(dst)
	out := make([][]tap, dst)
	for d := range out {
		lo, hi := float64(d)*scale, float64(d+1)*scale
		for s := int(lo); s < src && float64(s) < hi; s++ {
			if w := min(hi, float64(s+1)) - max(lo, float64(s)); w > 1e-9 {
				out[d] = append(out[d], tap{s, float32(w / scale)})
			}
		}
	}
	return out
}
