package ui

import (
	"image"
	"image/color"
	"testing"
)

func TestScaleToWidth(t *testing.T) {
	t.Parallel()
	// A 4×2 image of two 2×2 blocks, black and white, halves into one black and one
	// white pixel; a 3-wide stripe pattern averages to grey.
	src := image.NewRGBA(image.Rect(0, 0, 4, 2))
	for y := 0; y < 2; y++ {
		for x := 2; x < 4; x++ {
			src.Set(x, y, color.White)
		}
		for x := 0; x < 2; x++ {
			src.Set(x, y, color.Black)
		}
	}
	got := scaleToWidth(src, 2)
	if got.Bounds() != image.Rect(0, 0, 2, 1) || got.RGBAAt(0, 0) != (color.RGBA{0, 0, 0, 255}) || got.RGBAAt(1, 0) != (color.RGBA{255, 255, 255, 255}) {
		t.Errorf("halved = %v %v %v", got.Bounds(), got.RGBAAt(0, 0), got.RGBAAt(1, 0))
	}
	if got := scaleToWidth(src, 1); got.RGBAAt(0, 0) != (color.RGBA{128, 128, 128, 255}) {
		t.Errorf("averaged = %v", got.RGBAAt(0, 0))
	}

	// Non-RGBA sources and offset bounds are converted first; fractional spans keep the
	// weights summing to one (a uniform image stays uniform).
	gray := image.NewGray(image.Rect(10, 10, 17, 24))
	for i := range gray.Pix {
		gray.Pix[i] = 200
	}
	got = scaleToWidth(gray, 3)
	if got.Bounds() != image.Rect(0, 0, 3, 6) {
		t.Fatalf("bounds = %v", got.Bounds())
	}
	for y := 0; y < 6; y++ {
		for x := 0; x < 3; x++ {
			if c := got.RGBAAt(x, y); c != (color.RGBA{200, 200, 200, 255}) {
				t.Fatalf("pixel %d,%d = %v", x, y, c)
			}
		}
	}
}
