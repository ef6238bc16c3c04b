package recording

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"sort"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire/uitree"
)

// Sensitive regions of screens. A visual tree says where its sensitive nodes are (a
// secure flag, a marker in their id or type, a sensitive property or text — the official
// policy's rules, sanitize.go); from it:
//
//   - a frame is boxed: black rectangles (6 px of padding) over those nodes, scaled from
//     the tree's coordinate space (its coordinateSpace, else its root's bounds) to the
//     image. Its tree is the one linked to it (screenshotFrameId, or a
//     screenshotCapturedAtUtc equal to the frame's time), else the newest tree taken at
//     most frameTreeWindow before it. A frame with no such tree is blacked out whole, as
//     the official policy does when nothing can decide.
//   - a touch that lands on a sensitive node of the tree nearest to it in time (within
//     touchTreeWindow) is dropped — the official policy keeps touches, whose positions
//     over a PIN pad give the PIN away; a touch with no tree near enough is dropped too.
//
// Trees are read through wire/uitree, so compact v2 and legacy trees alike are understood;
// a payload that is not a tree decides nothing.
const (
	frameTreeWindow = 2 * time.Second
	touchTreeWindow = 2 * time.Second
	boxPadding      = 6
	boxedQuality    = 92 // the official policy re-encodes JPEGs at 92
)

// rect is a rectangle in some coordinate space.
type rect struct{ x, y, w, h float64 }

func (r rect) contains(x, y, pad float64) bool {
	return x >= r.x-pad && x <= r.x+r.w+pad && y >= r.y-pad && y <= r.y+r.h+pad
}

// treeRegions is what one visual tree says about its screen.
type treeRegions struct {
	at        time.Time
	frameID   string    // screenshotFrameId, if any
	shotAt    time.Time // screenshotCapturedAtUtc, if any
	viewport  rect      // its coordinate space; zero when unknown
	sensitive []rect    // in the tree's coordinates
	known     bool      // the payload read as a tree: it can decide
}

// treeIndex holds the trees of a recording in time order.
type treeIndex struct{ trees []treeRegions }

// regionsOf reads a tree payload (through wire/uitree, the one tree model: compact v2 and
// legacy alike) for its viewport and the bounds of its sensitive nodes. ok is false for a
// payload that is not a tree: it cannot decide anything.
func regionsOf(payload jsontext.Value) (viewport rect, sensitive []rect, ok bool) {
	t, err := uitree.Parse(payload)
	if err != nil {
		return rect{}, nil, false
	}
	if vp, ok := t.Viewport(); ok {
		viewport = rect{vp.X, vp.Y, vp.Width, vp.Height}
	}
	for _, n := range t.All() {
		if n.Bounds != nil && sensitiveNode(n) {
			sensitive = append(sensitive, rect{n.Bounds.X, n.Bounds.Y, n.Bounds.Width, n.Bounds.Height})
		}
	}
	return viewport, sensitive, true
}

// sensitiveNode applies the policy's rules for screens to one node: a secure entry, an
// automation id, id, type or role naming a sensitive input, text a detector matches, or
// properties that hold a sensitive input or property.
func sensitiveNode(n *uitree.Node) bool {
	if n.Secure {
		return true
	}
	for _, v := range []string{n.AutomationID, n.ID, n.Type, n.Role} {
		if sensitiveMarker(v) {
			return true
		}
	}
	for _, v := range []string{n.Text, n.Label, n.Value} {
		if v != "" && sensitiveText(v) {
			return true
		}
	}
	if props, err := members(n.Properties); err == nil && (sensitiveInput(props) || sensitiveContent(props)) {
		return true
	}
	return false
}

// add indexes a tree record whose payload is payload.
func (ti *treeIndex) add(rec Record, payload jsontext.Value) {
	t := treeRegions{at: rec.At}
	if meta, err := members(rec.Data); err == nil {
		t.frameID, _ = str(meta.get("screenshotFrameId"))
		if at, ok := parseTime(meta.get("screenshotCapturedAtUtc")); ok {
			t.shotAt = at
		}
	}
	t.viewport, t.sensitive, t.known = regionsOf(payload)
	ti.trees = append(ti.trees, t)
}

// sort orders the trees by time (records come in arrival order).
func (ti *treeIndex) sort() {
	sort.SliceStable(ti.trees, func(i, j int) bool { return ti.trees[i].at.Before(ti.trees[j].at) })
}

// forFrame finds a frame's tree (see the package comment above), or nil when none can
// decide.
func (ti *treeIndex) forFrame(frameID string, at time.Time) *treeRegions {
	var best *treeRegions
	for i := range ti.trees {
		t := &ti.trees[i]
		if (frameID != "" && t.frameID == frameID) || (!t.shotAt.IsZero() && t.shotAt.Equal(at)) {
			best = t
			break
		}
		if !t.at.After(at) && at.Sub(t.at) <= frameTreeWindow {
			best = t
		}
	}
	if best != nil && !best.known {
		return nil
	}
	return best
}

// nearest finds the tree nearest to at within window, or nil.
func (ti *treeIndex) nearest(at time.Time, window time.Duration) *treeRegions {
	var best *treeRegions
	var bestD time.Duration
	for i := range ti.trees {
		d := ti.trees[i].at.Sub(at)
		if d < 0 {
			d = -d
		}
		if d <= window && (best == nil || d < bestD) {
			best, bestD = &ti.trees[i], d
		}
	}
	return best
}

// touchPoint reads a touch record's position in the tree's coordinates: through the
// touch's surface when it has one (or its unit is normalised), else as it is.
func touchPoint(data jsontext.Value, vp rect) (x, y float64, ok bool) {
	o, err := members(data)
	if err != nil {
		return 0, 0, false
	}
	x, ok1 := num(o.get("x"))
	y, ok2 := num(o.get("y"))
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	unit, _ := str(o.get("unit"))
	if unit == "" {
		unit, _ = str(o.get("coordinateUnit"))
	}
	var sw, sh float64
	if s := arrayItems(o.get("surface")); len(s) >= 2 {
		sw, _ = num(s[0])
		sh, _ = num(s[1])
	} else {
		sw, _ = num(o.get("surfaceWidth"))
		sh, _ = num(o.get("surfaceHeight"))
	}
	switch {
	case vp.w > 0 && vp.h > 0 && (lower(unit) == "n" || lower(unit) == "normalized"):
		return vp.x + x*vp.w, vp.y + y*vp.h, true
	case vp.w > 0 && vp.h > 0 && sw > 0 && sh > 0:
		return vp.x + x/sw*vp.w, vp.y + y/sh*vp.h, true
	}
	return x, y, true
}

// touchVerdict says what becomes of a touch.
type touchVerdict int

const (
	touchKeep touchVerdict = iota
	touchOnSensitive
	touchUndecided
)

// judgeTouch decides a touch record by the tree nearest to it.
func (ti *treeIndex) judgeTouch(rec Record) touchVerdict {
	t := ti.nearest(rec.At, touchTreeWindow)
	if t == nil || !t.known {
		return touchUndecided
	}
	x, y, ok := touchPoint(rec.Data, t.viewport)
	if !ok {
		return touchUndecided
	}
	for _, r := range t.sensitive {
		if r.contains(x, y, boxPadding) {
			return touchOnSensitive
		}
	}
	return touchKeep
}

// boxFrame draws black boxes over the tree's sensitive regions on a JPEG, or blacks it out
// whole when t is nil; it returns the new JPEG and the number of boxes drawn (0 for a
// frame kept as it was, whose bytes come back unchanged).
func boxFrame(jpg []byte, t *treeRegions) ([]byte, int, error) {
	if t != nil && len(t.sensitive) == 0 {
		return jpg, 0, nil
	}
	src, err := jpeg.Decode(bytes.NewReader(jpg))
	if err != nil {
		return nil, 0, err
	}
	b := src.Bounds()
	img := image.NewRGBA(b)
	black := image.NewUniform(color.Black)
	n := 0
	if t == nil {
		draw.Draw(img, b, black, image.Point{}, draw.Src)
		n = 1
	} else {
		draw.Draw(img, b, src, b.Min, draw.Src)
		sx, sy := 1.0, 1.0
		vp := t.viewport
		if vp.w > 0 && vp.h > 0 {
			sx, sy = float64(b.Dx())/vp.w, float64(b.Dy())/vp.h
		}
		for _, r := range t.sensitive {
			box := image.Rect(int((r.x-vp.x)*sx)-boxPadding, int((r.y-vp.y)*sy)-boxPadding,
				int((r.x-vp.x+r.w)*sx+0.999)+boxPadding, int((r.y-vp.y+r.h)*sy+0.999)+boxPadding).Add(b.Min).Intersect(b)
			if box.Empty() {
				continue
			}
			draw.Draw(img, box, black, image.Point{}, draw.Src)
			n++
		}
	}
	var out bytes.Buffer
	if err := jpeg.Encode(&out, img, &jpeg.Options{Quality: boxedQuality}); err != nil {
		return nil, 0, err
	}
	return out.Bytes(), n, nil
}
