package ui_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/ui"
	"github.com/ansight-go/ansight/wire"
)

// clock is a settable clock for overlay lifetimes.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// plainScreen is a 100×200-point white screen rendered at 2 pixels per point, with one
// button.
type plainScreen struct{}

func (plainScreen) Capture(context.Context) (*ui.Node, error) {
	return &ui.Node{ID: "root", Type: "Window", Bounds: &ui.Bounds{Width: 100, Height: 200}, Children: []*ui.Node{
		{ID: "ok", Type: "Button", Text: "OK", Actions: []string{ui.ActionTap}, Bounds: &ui.Bounds{X: 10, Y: 20, Width: 30, Height: 10}},
	}}, nil
}
func (plainScreen) Perform(context.Context, string, ui.Action) (map[string]any, error) {
	return nil, nil
}
func (plainScreen) Render(context.Context) (image.Image, error) {
	img := image.NewRGBA(image.Rect(0, 0, 200, 400))
	for i := range img.Pix {
		img.Pix[i] = 0xFF
	}
	return img, nil
}

func overlayHarness(t *testing.T) (*apptest.Harness, *clock, *ui.OverlayScreen) {
	t.Helper()
	c := &clock{now: pinnedNow}
	screen := ui.NewOverlayScreen(plainScreen{})
	a := app.New(app.Options{})
	n := 0
	ids := func() string { n++; return strings.Repeat("0", 31) + string(rune('0'+n)) }
	if err := ui.Register(a, screen, ui.Options{Now: c.Now, IDs: ids, Platform: "linux"}); err != nil {
		t.Fatal(err)
	}
	return apptest.New(t, a), c, screen
}

// TestOverlayShapes: the official result shapes and defaults of every overlay tool.
func TestOverlayShapes(t *testing.T) {
	t.Parallel()
	h, c, _ := overlayHarness(t)
	res, _ := h.Call(ui.ShowOverlayToolID, `{"rects":[{"x":1,"y":2,"width":3,"height":4,"label":" a "}],"metadata":{"why":"agent","step":2}}`)
	want := `{"platform":"linux","capturedAtUtc":"2025-06-07T08:09:10.123456789Z","overlay":{"id":"00000000000000000000000000000001",` +
		`"platform":"linux","createdAtUtc":"2025-06-07T08:09:10.123456789Z","expiresAtUtc":"2025-06-07T08:09:15.123456789Z",` +
		`"durationMs":5000,"remainingMs":5000,"transient":true,"inputTransparent":true,"coordinateSpace":"window",` +
		`"style":{"strokeColor":"#FFFF3B30","fillColor":null,"strokeWidth":2,"cornerRadius":3},` +
		`"rects":[{"x":1,"y":2,"width":3,"height":4,"label":"a"}],"metadata":{"step":2,"why":"agent"}}}`
	if string(res) != want {
		t.Fatalf("show =\n%s\nwant\n%s", res, want)
	}
	c.Add(time.Second)
	res, _ = h.Call(ui.GetOverlayToolID, `{"overlayId":"00000000000000000000000000000001"}`)
	if !strings.Contains(string(res), `"remainingMs":4000`) {
		t.Errorf("get after a second: %s", res)
	}
	res, _ = h.Call(ui.ShowOverlayToolID, `{"overlayId":"pin","x":5,"y":5,"width":10,"height":10,"label":"here","durationMs":0,"strokeColor":"blue","fillColor":"#8034C759","metadata":{"why":"person"}}`)
	if !strings.Contains(string(res), `"id":"pin"`) || !strings.Contains(string(res), `"expiresAtUtc":null,"durationMs":0,"remainingMs":null,"transient":false`) ||
		!strings.Contains(string(res), `"strokeColor":"#FF007AFF","fillColor":"#8034C759"`) || !strings.Contains(string(res), `"label":"here"`) {
		t.Errorf("persistent overlay: %s", res)
	}
	res, _ = h.Call(ui.QueryOverlaysToolID, `{"metadataKey":"why","metadataValue":"AGENT"}`)
	if !strings.Contains(string(res), `"count":1,`) || !strings.Contains(string(res), `"id":"00000000000000000000000000000001"`) {
		t.Errorf("query by metadata: %s", res)
	}
	res, _ = h.Call(ui.QueryOverlaysToolID, `{}`)
	if !strings.Contains(string(res), `"count":2,`) {
		t.Errorf("query all: %s", res)
	}
	res, _ = h.Call(ui.UpdateOverlayToolID, `{"overlayId":"pin","metadata":{"step":3},"fillColor":null,"strokeWidth":500}`)
	if !strings.Contains(string(res), `"metadata":{"step":3,"why":"person"}`) || !strings.Contains(string(res), `"fillColor":null,"strokeWidth":128`) ||
		!strings.Contains(string(res), `"rects":[{"x":5,"y":5,"width":10,"height":10,"label":"here"}]`) {
		t.Errorf("update merges metadata, clears the fill, clamps the width, keeps the geometry: %s", res)
	}
	res, _ = h.Call(ui.UpdateOverlayToolID, `{"overlayId":"pin","metadata":{"only":true},"metadataMode":"replace","durationMs":1000}`)
	if !strings.Contains(string(res), `"metadata":{"only":true}`) || !strings.Contains(string(res), `"durationMs":1000,"remainingMs":1000,"transient":true`) {
		t.Errorf("replace and a new lifetime from now: %s", res)
	}
	res, _ = h.Call(ui.UpdateOverlayToolID, `{"overlayId":"pin","metadataMode":"clear"}`)
	if !strings.Contains(string(res), `"metadata":{}`) {
		t.Errorf("clear: %s", res)
	}
	res, _ = h.Call(ui.RemoveOverlayToolID, `{"overlayId":"pin"}`)
	if !strings.Contains(string(res), `"overlayId":"pin","removed":true,"overlay":{"id":"pin"`) {
		t.Errorf("remove: %s", res)
	}
	res, _ = h.Call(ui.RemoveOverlayToolID, `{"overlayId":"pin"}`)
	if !strings.HasSuffix(string(res), `"overlayId":"pin","removed":false,"overlay":null}`) {
		t.Errorf("remove again: %s", res)
	}
	res, _ = h.Call(ui.ClearOverlaysToolID, `{"metadataKey":"nope"}`)
	if !strings.Contains(string(res), `"count":0,"overlays":[]`) {
		t.Errorf("clear nothing: %s", res)
	}
	// Expiry: the first overlay's 5 s are up.
	c.Add(4 * time.Second)
	res, _ = h.Call(ui.ClearOverlaysToolID, `{}`)
	if !strings.Contains(string(res), `"count":0`) {
		t.Errorf("an expired overlay is still listed: %s", res)
	}
	if err := h.Fail(ui.GetOverlayToolID, `{"overlayId":"00000000000000000000000000000001"}`); err.Code != ui.CodeOverlayNotFound {
		t.Errorf("get of an expired overlay: %v", err)
	}
}

// TestOverlayRefusals: the official failure codes and messages.
func TestOverlayRefusals(t *testing.T) {
	t.Parallel()
	h, _, _ := overlayHarness(t)
	for _, tt := range []struct {
		tool, args string
		code       wire.Code
		msg        string
	}{
		{ui.ShowOverlayToolID, `{}`, ui.CodeOverlayCreateFailed, "nodeId, rects, or all of x/y/width/height"},
		{ui.ShowOverlayToolID, `{"x":1,"y":1,"width":0,"height":1}`, ui.CodeOverlayCreateFailed, "greater than zero"},
		{ui.ShowOverlayToolID, `{"rects":[]}`, ui.CodeOverlayCreateFailed, "at least one rectangle"},
		{ui.ShowOverlayToolID, `{"nodeId":"ok","x":1}`, ui.CodeOverlayCreateFailed, "not both"},
		{ui.ShowOverlayToolID, `{"nodeId":"ghost"}`, ui.CodeOverlayCreateFailed, `"ghost" was not found`},
		{ui.ShowOverlayToolID, `{"x":1,"y":1,"width":1,"height":1,"strokeColor":"chartreuse"}`, ui.CodeOverlayCreateFailed, "is not supported"},
		{ui.ShowOverlayToolID, `{"x":1,"y":1,"width":1,"height":1,"strokeColor":"#12345"}`, ui.CodeOverlayCreateFailed, "not a valid hex color"},
		{ui.ShowOverlayToolID, `{"x":1,"y":1,"width":1,"height":1,"strokeWidth":0}`, ui.CodeOverlayCreateFailed, "invisible"},
		{ui.ShowOverlayToolID, `{"x":1,"y":1,"width":1,"height":1,"metadata":{"a":{"b":1}}}`, wire.CodeArgumentsSchemaInvalid, "schema"},
		{ui.UpdateOverlayToolID, `{"overlayId":"none"}`, ui.CodeOverlayNotFound, "was not found"},
		{ui.GetOverlayToolID, `{"overlayId":"none"}`, ui.CodeOverlayNotFound, "was not found"},
	} {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			err := apptest.New(t, h.App()).Fail(tt.tool, tt.args)
			if err.Code != tt.code || !strings.Contains(err.Message, tt.msg) {
				t.Errorf("%v, want %s containing %q", err, tt.code, tt.msg)
			}
		})
	}
	h.Call(ui.ShowOverlayToolID, `{"overlayId":"x","x":1,"y":1,"width":1,"height":1}`)
	if err := h.Fail(ui.UpdateOverlayToolID, `{"overlayId":"x","metadataMode":"append"}`); err.Code != wire.CodeArgumentsSchemaInvalid {
		t.Errorf("unknown metadataMode: %v", err)
	}
}

// TestOverlayOnNodeKeepsReferences: an overlay on a node takes its bounds from the
// latest snapshot and captures nothing new: the references an agent holds stay valid.
func TestOverlayOnNodeKeepsReferences(t *testing.T) {
	t.Parallel()
	h, _, _ := overlayHarness(t)
	q, _ := h.Call(ui.QueryNodesToolID, `{"nodeId":"ok"}`)
	_, refs := matchesOf(t, q)
	res, _ := h.Call(ui.ShowOverlayToolID, `{"nodeId":"ok","label":"tap here"}`)
	if !strings.Contains(string(res), `"rects":[{"x":10,"y":20,"width":30,"height":10,"label":"tap here"}]`) {
		t.Errorf("node overlay: %s", res)
	}
	h.Call(ui.PerformActionToolID, `{"reference":`+refs["ok"]+`,"action":"tap"}`) // still the latest snapshot
}

// TestOverlaysAreDrawn: overlays show in screenshots and in frames of the OverlayScreen
// (the live screen), scaled from points to pixels; without overlays frames are untouched.
func TestOverlaysAreDrawn(t *testing.T) {
	t.Parallel()
	h, c, screen := overlayHarness(t)
	h.Call(ui.GetVisualTreeToolID, `{}`) // the root frame: 100 points over 200 pixels
	plain, err := screen.Render(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rgbaAt(plain, 30, 50) != (color.RGBA{255, 255, 255, 255}) {
		t.Fatalf("without overlays the frame changed")
	}
	h.Call(ui.ShowOverlayToolID, `{"x":10,"y":20,"width":30,"height":10,"strokeColor":"#F00","strokeWidth":2,"cornerRadius":0,"fillColor":"#800000FF"}`)
	_, r := h.Call(ui.GetScreenshotToolID, `{"format":"png"}`)
	var shot image.Image
	for _, b := range r.Artifacts {
		if shot, err = png.Decode(bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		}
	}
	live, err := screen.Render(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for name, img := range map[string]image.Image{"screenshot": shot, "live frame": live} {
		// The left edge at x=10 points is at 20 pixels, 2 points (4 pixels) wide, centred.
		if got := rgbaAt(img, 20, 50); got.R < 200 || got.G > 60 || got.B > 60 {
			t.Errorf("%s: the stroke is not drawn at the edge: %v", name, got)
		}
		// Inside, half-transparent blue over white.
		if got := rgbaAt(img, 50, 50); got.B < 200 || got.R < 100 || got.R > 160 {
			t.Errorf("%s: the fill is not blended inside: %v", name, got)
		}
		if got := rgbaAt(img, 150, 300); got != (color.RGBA{255, 255, 255, 255}) {
			t.Errorf("%s: a pixel far from the overlay changed: %v", name, got)
		}
	}
	c.Add(6 * time.Second)
	after, _ := screen.Render(context.Background())
	if got := rgbaAt(after, 20, 50); got != (color.RGBA{255, 255, 255, 255}) {
		t.Errorf("an expired overlay is still drawn: %v", got)
	}
	if img, w, _, err := ui.Frame(context.Background(), screen, 100, 80); err != nil || len(img) == 0 || w != 100 {
		t.Errorf("Frame over an OverlayScreen: %v %d", err, w)
	}
}

func rgbaAt(img image.Image, x, y int) color.RGBA {
	r, g, b, a := img.At(x, y).RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}
}
