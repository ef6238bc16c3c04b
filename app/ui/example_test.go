package ui_test

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"sync"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/ui"
)

// counter is the smallest useful screen: one button that counts its taps.
type counter struct {
	mu   sync.Mutex
	taps int
}

func (c *counter) Capture(ctx context.Context) (*ui.Node, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &ui.Node{ID: "window", Type: "Window", Role: "window", Children: []*ui.Node{{
		ID: "count", Type: "Button", Role: "button", AutomationID: "countButton",
		Text: fmt.Sprintf("Tapped %d times", c.taps), Actions: []string{ui.ActionTap},
		Bounds: &ui.Bounds{X: 20, Y: 20, Width: 200, Height: 44},
	}}}, nil
}

func (c *counter) Perform(ctx context.Context, nodeID string, act ui.Action) (map[string]any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if nodeID != "count" {
		return nil, ui.ErrNodeNotFound
	}
	c.taps++
	return map[string]any{"taps": c.taps}, nil
}

func (c *counter) Render(ctx context.Context) (image.Image, error) {
	img := image.NewRGBA(image.Rect(0, 0, 240, 84))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	return img, nil
}

// An app adopts the standard UI tools by implementing ui.Screen and registering it.
func ExampleRegister() {
	a := app.New(app.Options{})
	if err := ui.Register(a, &counter{}, ui.Options{}); err != nil {
		fmt.Println(err)
		return
	}
	// Serve a on a connection (app/connect does that for a real app).
	fmt.Println("registered")
	// Output: registered
}
