package ui

import (
	"context"
	"fmt"
	"image"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// Overlay tool failure codes (the official SDKs').
const (
	CodeOverlayNotFound     wire.Code = "visual_overlay_not_found"
	CodeOverlayCreateFailed wire.Code = "visual_overlay_create_failed"
	CodeOverlayUpdateFailed wire.Code = "visual_overlay_update_failed"
)

// Bounds of overlays, the official SDKs' where they have one.
const (
	defaultOverlayDuration = 5000           // ms
	maxOverlayDuration     = 10 * 60 * 1000 // ms
	maxOverlayRects        = 128            // per overlay
	maxOverlays            = 64             // live at once (ours: the official SDKs have none)
	maxOverlayMetadata     = 16             // entries
	maxOverlayMetadataKey  = 64             // characters
	maxOverlayMetadataStr  = 256            // characters, longer strings are cut
	maxOverlayID           = 128            // characters
	defaultStrokeColor     = "#FF3B30"      // red
	defaultStrokeWidth     = 2.0            // points, 0..128
	defaultCornerRadius    = 3.0            // points, 0..256
	overlayCoordinateSpace = "window"       // what results report: a Screen's window is its tree's space
)

// OverlayScreen is a Screen that draws the UI tools' diagnostic overlays (ui.show_overlay
// and the tools beside it) over the frames of another Screen: screenshots, and, when the
// app streams its screen with the same value (ui.FrameSource for package app/telemetry's Options.Frames),
// the live screen and recordings, so that a person watching sees what an agent points
// at. Overlays are input-transparent: they change no node and no action.
//
// Register wraps a plain Screen in one of its own; pass Register an OverlayScreen to
// share it:
//
//	screen := ui.NewOverlayScreen(myScreen)
//	ui.Register(a, screen, ui.Options{})
//	telemetry.New(telemetry.Options{Frames: ui.FrameSource(screen)})
type OverlayScreen struct {
	screen Screen

	mu       sync.Mutex
	now      func() time.Time
	overlays []*overlay // oldest first
	// points is the root frame of the latest capture: the space overlay rectangles are
	// in, mapped onto the rendered image's pixels.
	points *Bounds
}

// NewOverlayScreen wraps s.
func NewOverlayScreen(s Screen) *OverlayScreen { return &OverlayScreen{screen: s, now: time.Now} }

// Capture captures the wrapped screen (Screen).
func (o *OverlayScreen) Capture(ctx context.Context) (*Node, error) {
	root, err := o.screen.Capture(ctx)
	if err == nil && root != nil && root.Bounds != nil {
		b := *root.Bounds
		o.mu.Lock()
		o.points = &b
		o.mu.Unlock()
	}
	return root, err
}

// Perform acts on the wrapped screen (Screen).
func (o *OverlayScreen) Perform(ctx context.Context, nodeID string, act Action) (map[string]any, error) {
	return o.screen.Perform(ctx, nodeID, act)
}

// AwaitUpdates waits for the wrapped screen's pending updates, when it has any
// (UpdateAwaiter).
func (o *OverlayScreen) AwaitUpdates(ctx context.Context) error {
	if u, ok := o.screen.(UpdateAwaiter); ok {
		return u.AwaitUpdates(ctx)
	}
	return nil
}

// Render draws the wrapped screen with the live overlays over it (Screen). Without
// overlays the wrapped screen's image is returned as it is; with some, a copy is drawn on.
func (o *OverlayScreen) Render(ctx context.Context) (image.Image, error) {
	img, err := o.screen.Render(ctx)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	o.expire()
	live := slices.Clone(o.overlays)
	points := o.points
	o.mu.Unlock()
	if len(live) == 0 {
		return img, nil
	}
	return drawOverlays(img, live, points), nil
}

// expire drops overlays whose time is up. Callers hold mu.
func (o *OverlayScreen) expire() {
	now := o.now()
	o.overlays = slices.DeleteFunc(o.overlays, func(ov *overlay) bool { return ov.expired(now) })
}

// overlay is one live overlay.
type overlay struct {
	id        string
	rects     []overlayRect
	style     overlayStyle
	metadata  jsontext.Value // a JSON object of scalars
	createdAt time.Time
	expiresAt time.Time // zero: until removed
	duration  int       // ms, 0: until removed
}

func (ov *overlay) expired(now time.Time) bool {
	return !ov.expiresAt.IsZero() && !now.Before(ov.expiresAt)
}

type overlayRect struct {
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
	Label  *string `json:"label"`
}

type overlayStyle struct {
	stroke       rgba
	fill         *rgba
	strokeWidth  float64
	cornerRadius float64
}

// rgba is a colour as the overlay tools read and write it (#AARRGGBB).
type rgba struct{ a, r, g, b uint8 }

func (c rgba) String() string { return fmt.Sprintf("#%02X%02X%02X%02X", c.a, c.r, c.g, c.b) }

// namedColors are the colour names the official SDKs accept.
var namedColors = map[string]string{
	"black": "#000000", "white": "#FFFFFF", "red": "#FF3B30", "orange": "#FF9500", "yellow": "#FFCC00",
	"green": "#34C759", "blue": "#007AFF", "purple": "#AF52DE", "pink": "#FF2D55", "cyan": "#32ADE6",
	"gray": "#8E8E93", "grey": "#8E8E93",
}

// parseColor reads #RGB, #ARGB, #RRGGBB, #AARRGGBB or a colour name; with allowNone, a
// blank value, none, transparent and null mean no colour (nil).
func parseColor(raw string, allowNone bool) (*rgba, error) {
	v := strings.TrimSpace(raw)
	if allowNone && (v == "" || strings.EqualFold(v, "none") || strings.EqualFold(v, "transparent") || strings.EqualFold(v, "null")) {
		return nil, nil
	}
	if named, ok := namedColors[strings.ToLower(v)]; ok {
		v = named
	}
	hex, ok := strings.CutPrefix(v, "#")
	if !ok {
		return nil, fmt.Errorf("the color %q is not supported. Use #RGB, #ARGB, #RRGGBB, #AARRGGBB, or a common color name", raw)
	}
	digits := make([]uint8, 0, 8)
	for i := 0; i < len(hex); i++ {
		c := hex[i]
		switch {
		case c >= '0' && c <= '9':
			digits = append(digits, c-'0')
		case c >= 'a' && c <= 'f':
			digits = append(digits, c-'a'+10)
		case c >= 'A' && c <= 'F':
			digits = append(digits, c-'A'+10)
		default:
			return nil, fmt.Errorf("the color %q is not a valid hex color", raw)
		}
	}
	byteOf := func(i int) uint8 { return digits[i]<<4 | digits[i+1] }
	switch len(digits) {
	case 3:
		return &rgba{255, digits[0] * 17, digits[1] * 17, digits[2] * 17}, nil
	case 4:
		return &rgba{digits[0] * 17, digits[1] * 17, digits[2] * 17, digits[3] * 17}, nil
	case 6:
		return &rgba{255, byteOf(0), byteOf(2), byteOf(4)}, nil
	case 8:
		return &rgba{byteOf(0), byteOf(2), byteOf(4), byteOf(6)}, nil
	}
	return nil, fmt.Errorf("the color %q is not a valid hex color", raw)
}

// --- arguments ---

// geometryArgs place an overlay: a node, rectangles, or one rectangle.
type geometryArgs struct {
	NodeID          *string       `json:"nodeId,omitzero"`
	Rects           []overlayRect `json:"rects,omitzero"`
	X               *float64      `json:"x,omitzero"`
	Y               *float64      `json:"y,omitzero"`
	Width           *float64      `json:"width,omitzero"`
	Height          *float64      `json:"height,omitzero"`
	Label           *string       `json:"label,omitzero"`
	CoordinateSpace string        `json:"coordinateSpace,omitzero"`
}

func (g *geometryArgs) given() bool {
	return g.NodeID != nil && strings.TrimSpace(*g.NodeID) != "" || g.coordinates()
}

func (g *geometryArgs) coordinates() bool {
	return g.Rects != nil || g.X != nil || g.Y != nil || g.Width != nil || g.Height != nil
}

type styleArgs struct {
	StrokeColor *string `json:"strokeColor,omitzero"`
	// FillColor is kept raw: null given says "no fill", absent says "keep".
	FillColor    jsontext.Value `json:"fillColor,omitzero"`
	StrokeWidth  *float64       `json:"strokeWidth,omitzero"`
	CornerRadius *float64       `json:"cornerRadius,omitzero"`
}

type showArgs struct {
	OverlayID *string `json:"overlayId,omitzero"`
	geometryArgs
	styleArgs
	DurationMs *int           `json:"durationMs,omitzero"`
	Metadata   jsontext.Value `json:"metadata,omitzero"`
}

type updateArgs struct {
	OverlayID string `json:"overlayId"`
	geometryArgs
	styleArgs
	DurationMs   *int           `json:"durationMs,omitzero"`
	Metadata     jsontext.Value `json:"metadata,omitzero"`
	MetadataMode string         `json:"metadataMode,omitzero"`
}

type overlayIDArgs struct {
	OverlayID string `json:"overlayId"`
}

type overlayQueryArgs struct {
	MetadataKey   *string `json:"metadataKey,omitzero"`
	MetadataValue *string `json:"metadataValue,omitzero"`
}

// --- results ---

type overlayJSON struct {
	ID               string          `json:"id"`
	Platform         string          `json:"platform"`
	CreatedAtUtc     time.Time       `json:"createdAtUtc"`
	ExpiresAtUtc     *time.Time      `json:"expiresAtUtc"`
	DurationMs       int             `json:"durationMs"`
	RemainingMs      *int64          `json:"remainingMs"`
	Transient        bool            `json:"transient"`
	InputTransparent bool            `json:"inputTransparent"`
	CoordinateSpace  string          `json:"coordinateSpace"`
	Style            overlayStyleOut `json:"style"`
	Rects            []overlayRect   `json:"rects"`
	Metadata         jsontext.Value  `json:"metadata"`
}

type overlayStyleOut struct {
	StrokeColor  string  `json:"strokeColor"`
	FillColor    *string `json:"fillColor"`
	StrokeWidth  float64 `json:"strokeWidth"`
	CornerRadius float64 `json:"cornerRadius"`
}

type overlayResult struct {
	Platform      string      `json:"platform"`
	CapturedAtUtc time.Time   `json:"capturedAtUtc"`
	Overlay       overlayJSON `json:"overlay"`
}

type overlaysResult struct {
	Platform      string        `json:"platform"`
	CapturedAtUtc time.Time     `json:"capturedAtUtc"`
	Count         int           `json:"count"`
	Overlays      []overlayJSON `json:"overlays"`
}

type removeResult struct {
	Platform      string       `json:"platform"`
	CapturedAtUtc time.Time    `json:"capturedAtUtc"`
	OverlayID     string       `json:"overlayId"`
	Removed       bool         `json:"removed"`
	Overlay       *overlayJSON `json:"overlay"`
}

func (t *toolkit) overlayJSON(ov *overlay, now time.Time) overlayJSON {
	j := overlayJSON{
		ID: ov.id, Platform: t.platform, CreatedAtUtc: ov.createdAt, DurationMs: ov.duration,
		Transient: ov.duration > 0, InputTransparent: true, CoordinateSpace: overlayCoordinateSpace,
		Style: overlayStyleOut{StrokeColor: ov.style.stroke.String(), StrokeWidth: ov.style.strokeWidth,
			CornerRadius: ov.style.cornerRadius},
		Rects: ov.rects, Metadata: ov.metadata,
	}
	if ov.style.fill != nil {
		s := ov.style.fill.String()
		j.Style.FillColor = &s
	}
	if !ov.expiresAt.IsZero() {
		at := ov.expiresAt
		remaining := max(0, int64(math.Round(float64(at.Sub(now))/float64(time.Millisecond))))
		j.ExpiresAtUtc, j.RemainingMs = &at, &remaining
	}
	return j
}

// --- the tools ---

func (t *toolkit) showOverlay(ctx context.Context, a showArgs) (*overlayResult, error) {
	id := t.ids()
	if a.OverlayID != nil && strings.TrimSpace(*a.OverlayID) != "" {
		id = strings.TrimSpace(*a.OverlayID)
	}
	fail := func(err error) error { return toolError(CodeOverlayCreateFailed, err.Error(), nil) }
	if utf8.RuneCountInString(id) > maxOverlayID {
		return nil, fail(fmt.Errorf("the overlayId argument must be non-empty and at most %d characters", maxOverlayID))
	}
	style, err := overlayStyle{stroke: mustColor(defaultStrokeColor), strokeWidth: defaultStrokeWidth,
		cornerRadius: defaultCornerRadius}.with(a.styleArgs)
	if err != nil {
		return nil, fail(err)
	}
	metadata, err := parseMetadata(a.Metadata)
	if err != nil {
		return nil, fail(err)
	}
	rects, err := t.overlayRects(ctx, a.geometryArgs)
	if err != nil {
		return nil, fail(err)
	}
	now := t.now().UTC()
	ov := &overlay{id: id, rects: rects, style: style, metadata: metadata, createdAt: now}
	ov.setDuration(clampOr(a.DurationMs, defaultOverlayDuration, 0, maxOverlayDuration), now)

	o := t.screen
	o.mu.Lock()
	defer o.mu.Unlock()
	o.expire()
	o.overlays = slices.DeleteFunc(o.overlays, func(x *overlay) bool { return x.id == id })
	if len(o.overlays) >= maxOverlays {
		return nil, fail(fmt.Errorf("%d overlays are showing already; remove some first (ui.clear_overlays)", maxOverlays))
	}
	o.overlays = append(o.overlays, ov)
	return &overlayResult{Platform: t.platform, CapturedAtUtc: now, Overlay: t.overlayJSON(ov, now)}, nil
}

func (ov *overlay) setDuration(ms int, now time.Time) {
	ov.duration, ov.expiresAt = ms, time.Time{}
	if ms > 0 {
		ov.expiresAt = now.Add(time.Duration(ms) * time.Millisecond)
	}
}

func mustColor(s string) rgba {
	c, err := parseColor(s, false)
	if err != nil {
		panic(err)
	}
	return *c
}

// with applies the style arguments given to s.
func (s overlayStyle) with(a styleArgs) (overlayStyle, error) {
	if a.StrokeColor != nil && strings.TrimSpace(*a.StrokeColor) != "" {
		c, err := parseColor(*a.StrokeColor, false)
		if err != nil {
			return s, err
		}
		s.stroke = *c
	}
	if len(a.FillColor) > 0 {
		var raw string
		if a.FillColor.Kind() == '"' {
			if err := wire.Unmarshal(a.FillColor, &raw); err != nil {
				return s, err
			}
		}
		c, err := parseColor(raw, true)
		if err != nil {
			return s, err
		}
		s.fill = c
	}
	if a.StrokeWidth != nil {
		s.strokeWidth = clampFloat(*a.StrokeWidth, 0, 128)
	}
	if a.CornerRadius != nil {
		s.cornerRadius = clampFloat(*a.CornerRadius, 0, 256)
	}
	if s.strokeWidth <= 0 && s.fill == nil {
		return s, fmt.Errorf("the overlay would be invisible because strokeWidth is zero and fillColor is empty")
	}
	return s, nil
}

func clampFloat(v, lo, hi float64) float64 {
	if math.IsNaN(v) {
		return lo
	}
	return max(lo, min(v, hi))
}

// parseMetadata checks a metadata object: at most 16 scalar entries with keys of 1..64
// characters; strings longer than 256 characters are cut. Absent or null is {}.
func parseMetadata(raw jsontext.Value) (jsontext.Value, error) {
	if len(raw) == 0 || raw.Kind() == 'n' {
		return jsontext.Value(`{}`), nil
	}
	var m map[string]any
	if raw.Kind() != '{' || wire.Unmarshal(raw, &m) != nil {
		return nil, fmt.Errorf("the metadata argument must be a JSON object")
	}
	if len(m) > maxOverlayMetadata {
		return nil, fmt.Errorf("the metadata object can contain at most %d entries", maxOverlayMetadata)
	}
	for k, v := range m {
		if strings.TrimSpace(k) == "" || utf8.RuneCountInString(k) > maxOverlayMetadataKey {
			return nil, fmt.Errorf("metadata keys must be non-empty and at most %d characters", maxOverlayMetadataKey)
		}
		switch v := v.(type) {
		case map[string]any, []any:
			return nil, fmt.Errorf("metadata values must be scalar JSON values")
		case string:
			if utf8.RuneCountInString(v) > maxOverlayMetadataStr {
				m[k] = string([]rune(v)[:maxOverlayMetadataStr])
			}
		}
	}
	return wire.Marshal(m)
}

// mergeMetadata applies an update's metadata to the current one by mode.
func mergeMetadata(current, patch jsontext.Value, mode string) (jsontext.Value, error) {
	switch strings.ToLower(strings.TrimSpace(mode)) {
	case "clear":
		return jsontext.Value(`{}`), nil
	case "replace":
		return parseMetadata(patch)
	case "", "merge":
		if len(patch) == 0 {
			return current, nil
		}
		p, err := parseMetadata(patch)
		if err != nil {
			return nil, err
		}
		var cur, add map[string]any
		_ = wire.Unmarshal(current, &cur)
		_ = wire.Unmarshal(p, &add)
		if cur == nil {
			cur = map[string]any{}
		}
		for k, v := range add {
			cur[k] = v
		}
		if len(cur) > maxOverlayMetadata {
			return nil, fmt.Errorf("the metadata object can contain at most %d entries", maxOverlayMetadata)
		}
		return wire.Marshal(cur)
	}
	return nil, fmt.Errorf("the metadataMode argument must be one of: merge, replace, clear")
}

// overlayRects resolves an overlay's geometry: the bounds of a node (of the latest
// snapshot, else of the screen now), the rects, or the one rectangle x/y/width/height.
func (t *toolkit) overlayRects(ctx context.Context, g geometryArgs) ([]overlayRect, error) {
	label := func() *string {
		if g.Label == nil || strings.TrimSpace(*g.Label) == "" {
			return nil
		}
		l := strings.TrimSpace(*g.Label)
		return &l
	}
	if g.NodeID != nil && strings.TrimSpace(*g.NodeID) != "" {
		if g.coordinates() {
			return nil, fmt.Errorf("pass either nodeId or rectangle coordinates, not both")
		}
		id := strings.TrimSpace(*g.NodeID)
		b, err := t.nodeBounds(ctx, id)
		if err != nil {
			return nil, err
		}
		r, err := checkRect(overlayRect{X: b.X, Y: b.Y, Width: b.Width, Height: b.Height, Label: label()})
		if err != nil {
			return nil, err
		}
		return []overlayRect{r}, nil
	}
	if g.Rects != nil {
		switch {
		case len(g.Rects) == 0:
			return nil, fmt.Errorf("the rects argument must contain at least one rectangle object")
		case len(g.Rects) > maxOverlayRects:
			return nil, fmt.Errorf("the rects argument can contain at most %d rectangles", maxOverlayRects)
		}
		out := make([]overlayRect, len(g.Rects))
		for i, r := range g.Rects {
			if r.Label != nil && strings.TrimSpace(*r.Label) == "" {
				r.Label = nil
			} else if r.Label != nil {
				l := strings.TrimSpace(*r.Label)
				r.Label = &l
			}
			var err error
			if out[i], err = checkRect(r); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	if g.X == nil || g.Y == nil || g.Width == nil || g.Height == nil {
		return nil, fmt.Errorf("pass nodeId, rects, or all of x/y/width/height")
	}
	r, err := checkRect(overlayRect{X: *g.X, Y: *g.Y, Width: *g.Width, Height: *g.Height, Label: label()})
	if err != nil {
		return nil, err
	}
	return []overlayRect{r}, nil
}

func checkRect(r overlayRect) (overlayRect, error) {
	for _, v := range []float64{r.X, r.Y, r.Width, r.Height} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return r, fmt.Errorf("overlay rectangle coordinates must be finite numbers")
		}
	}
	if r.Width <= 0 || r.Height <= 0 {
		return r, fmt.Errorf("overlay rectangle width and height must be greater than zero")
	}
	return r, nil
}

// nodeBounds finds a node's frame: in the latest snapshot (an overlay never supersedes
// the references an agent holds), else on the screen now, without recording a snapshot.
func (t *toolkit) nodeBounds(ctx context.Context, id string) (*Bounds, error) {
	if snap := t.store.latestOf(t.source); snap != nil {
		if n := snap.byID[id]; n != nil {
			if n.Bounds == nil {
				return nil, fmt.Errorf("the node %q has no bounds", id)
			}
			return n.Bounds, nil
		}
	}
	root, err := t.screen.Capture(ctx)
	if err != nil {
		return nil, fmt.Errorf("capturing the screen failed: %w", err)
	}
	n := findNode(root, id, 0)
	switch {
	case n == nil:
		return nil, fmt.Errorf("the node %q was not found", id)
	case n.Bounds == nil:
		return nil, fmt.Errorf("the node %q has no bounds", id)
	}
	b := *n.Bounds
	return &b, nil
}

// findNode searches a captured tree (bounded as captures are).
func findNode(n *Node, id string, depth int) *Node {
	if n == nil || depth > maxTreeDepth {
		return nil
	}
	if n.ID == id {
		return n
	}
	for _, c := range n.Children {
		if f := findNode(c, id, depth+1); f != nil {
			return f
		}
	}
	return nil
}

func (t *toolkit) updateOverlay(ctx context.Context, a updateArgs) (*overlayResult, error) {
	id := strings.TrimSpace(a.OverlayID)
	o := t.screen
	o.mu.Lock()
	o.expire()
	i := slices.IndexFunc(o.overlays, func(x *overlay) bool { return x.id == id })
	var cur overlay
	if i >= 0 {
		cur = *o.overlays[i]
	}
	o.mu.Unlock()
	if i < 0 {
		return nil, toolError(CodeOverlayNotFound, fmt.Sprintf("the overlay %q was not found", id), nil)
	}
	fail := func(err error) error { return toolError(CodeOverlayUpdateFailed, err.Error(), nil) }
	next := cur
	if a.geometryArgs.given() {
		rects, err := t.overlayRects(ctx, a.geometryArgs)
		if err != nil {
			return nil, fail(err)
		}
		next.rects = rects
	}
	style, err := cur.style.with(a.styleArgs)
	if err != nil {
		return nil, fail(err)
	}
	next.style = style
	if next.metadata, err = mergeMetadata(cur.metadata, a.Metadata, a.MetadataMode); err != nil {
		return nil, fail(err)
	}
	now := t.now().UTC()
	if a.DurationMs != nil {
		next.setDuration(clampOr(a.DurationMs, cur.duration, 0, maxOverlayDuration), now)
	}

	o.mu.Lock()
	defer o.mu.Unlock()
	o.expire()
	j := slices.IndexFunc(o.overlays, func(x *overlay) bool { return x.id == id })
	if j < 0 { // removed or expired while the geometry was resolved
		return nil, toolError(CodeOverlayNotFound, fmt.Sprintf("the overlay %q was not found", id), nil)
	}
	o.overlays[j] = &next
	return &overlayResult{Platform: t.platform, CapturedAtUtc: now, Overlay: t.overlayJSON(&next, now)}, nil
}

func (t *toolkit) getOverlay(a overlayIDArgs) (*overlayResult, error) {
	id := strings.TrimSpace(a.OverlayID)
	now := t.now().UTC()
	o := t.screen
	o.mu.Lock()
	defer o.mu.Unlock()
	o.expire()
	for _, ov := range o.overlays {
		if ov.id == id {
			return &overlayResult{Platform: t.platform, CapturedAtUtc: now, Overlay: t.overlayJSON(ov, now)}, nil
		}
	}
	return nil, toolError(CodeOverlayNotFound, fmt.Sprintf("the overlay %q was not found", id), nil)
}

func (t *toolkit) removeOverlay(a overlayIDArgs) (*removeResult, error) {
	id := strings.TrimSpace(a.OverlayID)
	now := t.now().UTC()
	r := &removeResult{Platform: t.platform, CapturedAtUtc: now, OverlayID: id}
	o := t.screen
	o.mu.Lock()
	defer o.mu.Unlock()
	o.expire()
	o.overlays = slices.DeleteFunc(o.overlays, func(ov *overlay) bool {
		if ov.id != id {
			return false
		}
		j := t.overlayJSON(ov, now)
		r.Removed, r.Overlay = true, &j
		return true
	})
	return r, nil
}

// overlays lists the live overlays a metadata query selects (oldest first), removing them
// with remove.
func (t *toolkit) overlays(a overlayQueryArgs, remove bool) (*overlaysResult, error) {
	now := t.now().UTC()
	r := &overlaysResult{Platform: t.platform, CapturedAtUtc: now, Overlays: []overlayJSON{}}
	o := t.screen
	o.mu.Lock()
	defer o.mu.Unlock()
	o.expire()
	o.overlays = slices.DeleteFunc(o.overlays, func(ov *overlay) bool {
		if !ov.selected(a) {
			return false
		}
		r.Overlays = append(r.Overlays, t.overlayJSON(ov, now))
		return remove
	})
	r.Count = len(r.Overlays)
	return r, nil
}

// selected applies a metadata query: no key selects all; a key selects overlays that have
// it; a value also requires the key's value (a string as it is, other scalars as JSON)
// to equal it, case-insensitively.
func (ov *overlay) selected(a overlayQueryArgs) bool {
	if a.MetadataKey == nil || strings.TrimSpace(*a.MetadataKey) == "" {
		return true
	}
	var m map[string]jsontext.Value
	if wire.Unmarshal(ov.metadata, &m) != nil {
		return false
	}
	v, ok := m[*a.MetadataKey]
	if !ok {
		return false
	}
	if a.MetadataValue == nil {
		return true
	}
	s := string(v)
	if v.Kind() == '"' {
		_ = wire.Unmarshal(v, &s)
	}
	return strings.EqualFold(s, *a.MetadataValue)
}
