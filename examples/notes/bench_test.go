package notes

import (
	"context"
	"testing"
)

func BenchmarkRender(b *testing.B) {
	for _, scale := range []float64{1, 2} {
		b.Run(map[float64]string{1: "1x", 2: "2x"}[scale], func(b *testing.B) {
			m := New(Options{Scale: scale})
			for b.Loop() {
				if _, err := m.Render(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCapture(b *testing.B) {
	m := New(Options{})
	for b.Loop() {
		if _, err := m.Capture(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
