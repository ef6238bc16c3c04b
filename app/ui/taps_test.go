package ui_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/ui"
	"github.com/ansight-go/ansight/wire/uitree"
)

// signInScreen is a 100×200 point sign-in form drawn at 2× (200×400 pixels): a user name
// field, a secure password field and a button, all drawn white.
type signInScreen struct{}

func (signInScreen) Capture(ctx context.Context) (*ui.Node, error) {
	return &ui.Node{ID: "root", Type: "Window", Role: "window", Bounds: &ui.Bounds{Width: 100, Height: 200}, Children: []*ui.Node{
		{ID: "user", Type: "TextField", Role: "textbox", Text: "ann", Actions: []string{ui.ActionTap, ui.ActionTypeText}, Bounds: &ui.Bounds{X: 10, Y: 20, Width: 80, Height: 20}},
		{ID: "password", Type: "SecureField", Role: "textbox", Label: "Password", Text: "hunter2", Secure: true,
			Actions: []string{ui.ActionTap, ui.ActionTypeText}, Bounds: &ui.Bounds{X: 10, Y: 60, Width: 80, Height: 20}},
		{ID: "signin", Type: "Button", Role: "button", Text: "Sign in", Actions: []string{ui.ActionTap}, Bounds: &ui.Bounds{X: 10, Y: 100, Width: 80, Height: 30}},
	}}, nil
}

func (signInScreen) Perform(ctx context.Context, id string, act ui.Action) (map[string]any, error) {
	return nil, nil
}

func (signInScreen) Render(ctx context.Context) (image.Image, error) {
	img := image.NewRGBA(image.Rect(0, 0, 200, 400))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	return img, nil
}

type tap struct {
	x, y, w, h float64
	secure     bool
	tree       string
}

type taps struct {
	mu  sync.Mutex
	got []tap
}

func (r *taps) RecordTap(at time.Time, x, y, width, height float64, secure bool, tree []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, tap{x, y, width, height, secure, string(tree)})
}

// TestPerformedTapsReported: ui.perform_action reports the taps it performs to
// Options.Taps — the node's centre, the screen's size, whether the node is secure and the
// tree it was resolved on (compact v2) — and nothing for actions that touch nothing.
func TestPerformedTapsReported(t *testing.T) {
	t.Parallel()
	a := app.New(app.Options{})
	rec := &taps{}
	if err := ui.Register(a, signInScreen{}, ui.Options{Taps: rec}); err != nil {
		t.Fatal(err)
	}
	h := apptest.New(t, a)
	res, _ := h.Call(ui.QueryNodesToolID, `{}`)
	snap := decode(t, res)["snapshotId"].(string)
	for _, call := range []string{`"nodeId":"password","action":"tap"`, `"nodeId":"password","action":"typeText","value":"x"`, `"nodeId":"signin","action":"tap"`} {
		h.Call(ui.PerformActionToolID, fmt.Sprintf(`{"snapshotId":%q,%s}`, snap, call))
	}
	if len(rec.got) != 2 {
		t.Fatalf("%d taps reported: %+v", len(rec.got), rec.got)
	}
	if p := rec.got[0]; p.x != 50 || p.y != 70 || p.w != 100 || p.h != 200 || !p.secure {
		t.Errorf("the password tap: %+v", p)
	}
	if p := rec.got[1]; p.x != 50 || p.y != 115 || p.secure {
		t.Errorf("the button tap: %+v", p)
	}
	tree, err := uitree.Parse([]byte(rec.got[0].tree))
	if err != nil || tree.SnapshotID != snap || tree.Node("password") == nil || !tree.Node("password").Secure || strings.Contains(rec.got[0].tree, "hunter2") {
		t.Errorf("the tree of a tap: %v %s", err, rec.got[0].tree)
	}
}

// upTaps is a ui.TapTreeRecorder: it keeps the trees after the taps too.
type upTaps struct {
	taps
	up []string
}

func (r *upTaps) RecordTapUp(at time.Time, tree []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.up = append(r.up, string(tree))
}

// pagedScreen is signInScreen until its button is tapped, then a welcome page.
type pagedScreen struct {
	signInScreen
	mu       sync.Mutex
	signedIn bool
}

func (s *pagedScreen) Capture(ctx context.Context) (*ui.Node, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.signedIn {
		return &ui.Node{ID: "root", Type: "Window", Bounds: &ui.Bounds{Width: 100, Height: 200}, Children: []*ui.Node{
			{ID: "welcome", Type: "Label", Text: "Welcome", Bounds: &ui.Bounds{X: 10, Y: 20, Width: 80, Height: 20}}}}, nil
	}
	return s.signInScreen.Capture(ctx)
}

func (s *pagedScreen) Perform(ctx context.Context, id string, act ui.Action) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.signedIn = s.signedIn || id == "signin"
	return nil, nil
}

// TestTreeAfterTapReported: a ui.TapTreeRecorder gets, after each tap, the tree of the
// screen the tap led to (touch up, as the official SDKs send it) — captured apart from the
// snapshots the tools hand out, so the references the caller holds stay valid.
func TestTreeAfterTapReported(t *testing.T) {
	t.Parallel()
	a := app.New(app.Options{})
	rec := &upTaps{}
	if err := ui.Register(a, &pagedScreen{}, ui.Options{Taps: rec}); err != nil {
		t.Fatal(err)
	}
	h := apptest.New(t, a)
	res, _ := h.Call(ui.QueryNodesToolID, `{}`)
	snap := decode(t, res)["snapshotId"].(string)
	h.Call(ui.PerformActionToolID, fmt.Sprintf(`{"snapshotId":%q,"nodeId":"password","action":"tap"}`, snap))
	// The same snapshot still addresses the screen: the tree after the first tap superseded nothing.
	h.Call(ui.PerformActionToolID, fmt.Sprintf(`{"snapshotId":%q,"nodeId":"signin","action":"tap"}`, snap)) // fails the test if stale
	if len(rec.got) != 2 || len(rec.up) != 2 {
		t.Fatalf("%d taps and %d trees after them", len(rec.got), len(rec.up))
	}
	first, err1 := uitree.Parse([]byte(rec.up[0]))
	after, err2 := uitree.Parse([]byte(rec.up[1]))
	if err1 != nil || err2 != nil || first.Node("password") == nil || first.SnapshotID == snap || strings.Contains(rec.up[0], "hunter2") {
		t.Errorf("the tree after the password tap: %v %s", err1, rec.up[0])
	}
	if after.Node("welcome") == nil || after.Node("signin") != nil {
		t.Errorf("the tree after the sign-in tap is not the page it led to: %v %s", err2, rec.up[1])
	}
}

// TestFrameMasksSecureNodes: the frames of the live stream have the secure nodes boxed
// black (scaled from points to pixels); the rest of the screen is as drawn.
func TestFrameMasksSecureNodes(t *testing.T) {
	t.Parallel()
	b, w, h, err := ui.Frame(context.Background(), signInScreen{}, 0, 90)
	if err != nil || w != 200 || h != 400 {
		t.Fatalf("Frame = %dx%d, %v", w, h, err)
	}
	img, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	dark := func(x, y int) bool { r, g, b, _ := img.At(x, y).RGBA(); return r < 0x3000 && g < 0x3000 && b < 0x3000 }
	if !dark(100, 140) || !dark(22, 122) || dark(100, 60) || dark(100, 230) {
		t.Errorf("password boxed %v %v, user %v, button %v", dark(100, 140), dark(22, 122), dark(100, 60), dark(100, 230))
	}
}
