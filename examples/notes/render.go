package notes

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// theme is the palette of one appearance.
type theme struct {
	bg, surface, field, text, secondary, placeholder, accent, onAccent, separator,
	border, destructive, toggleOn, toggleOff, disabledFill, disabledText color.RGBA
}

var (
	lightTheme = theme{
		bg: rgb(0xF2F2F7), surface: rgb(0xFFFFFF), field: rgb(0xE4E4E9), text: rgb(0x1C1C1E),
		secondary: rgb(0x6C6C70), placeholder: rgb(0x8E8E93), accent: rgb(0x007AFF), onAccent: rgb(0xFFFFFF),
		separator: rgb(0xD8D8DC), border: rgb(0xC7C7CC), destructive: rgb(0xFF3B30), toggleOn: rgb(0x34C759),
		toggleOff: rgb(0xE3E3E8), disabledFill: rgb(0xE5E5EA), disabledText: rgb(0xA1A1A6),
	}
	darkTheme = theme{
		bg: rgb(0x000000), surface: rgb(0x1C1C1E), field: rgb(0x2C2C2E), text: rgb(0xFFFFFF),
		secondary: rgb(0xAEAEB2), placeholder: rgb(0x8E8E93), accent: rgb(0x0A84FF), onAccent: rgb(0xFFFFFF),
		separator: rgb(0x38383A), border: rgb(0x48484A), destructive: rgb(0xFF453A), toggleOn: rgb(0x30D158),
		toggleOff: rgb(0x39393D), disabledFill: rgb(0x2C2C2E), disabledText: rgb(0x636366),
	}
)

func rgb(v uint32) color.RGBA { return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 0xFF} }

// fonts are the embedded Go fonts, parsed once. Faces are made per render: an opentype
// face is not safe for concurrent use.
var fonts = sync.OnceValues(func() ([2]*opentype.Font, error) {
	regular, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return [2]*opentype.Font{}, err
	}
	bold, err := opentype.Parse(gobold.TTF)
	return [2]*opentype.Font{regular, bold}, err
})

// painter draws in points onto an image of scale pixels per point.
type painter struct {
	img   *image.RGBA
	scale float64
	th    theme
	fonts [2]*opentype.Font
	faces map[faceKey]font.Face
	z     vector.Rasterizer
}

type faceKey struct {
	bold bool
	size float64
}

// render draws a laid-out screen.
func render(root *widget, dark bool, clock time.Time, scale float64) (image.Image, error) {
	fs, err := fonts()
	if err != nil {
		return nil, fmt.Errorf("demo: loading fonts: %w", err)
	}
	p := &painter{
		img:   image.NewRGBA(image.Rect(0, 0, int(screenWidth*scale+0.5), int(screenHeight*scale+0.5))),
		scale: scale, th: lightTheme, fonts: fs, faces: map[faceKey]font.Face{},
	}
	if dark {
		p.th = darkTheme
	}
	defer func() {
		for _, f := range p.faces {
			f.Close()
		}
	}()
	draw.Draw(p.img, p.img.Bounds(), image.NewUniform(p.th.bg), image.Point{}, draw.Src)
	p.statusBar(clock)
	p.widget(root)
	// The home indicator.
	p.roundRect(rect{screenWidth/2 - 67, screenHeight - 13, 134, 5}, 2.5, p.th.text)
	return p.img, nil
}

func (p *painter) statusBar(clock time.Time) {
	p.text(fmt.Sprintf("%d:%02d", clock.Hour(), clock.Minute()), 30, 31, 16, true, p.th.text)
	// Signal bars, Wi-Fi-less and a battery: enough to read as a phone.
	for i := 0; i < 4; i++ {
		h := 4 + float64(i)*2.5
		p.roundRect(rect{294 + float64(i)*5.5, 27 - h, 3.5, h}, 1, p.th.text)
	}
	p.roundRect(rect{326, 17, 27, 13}, 4, p.th.secondary)
	p.roundRect(rect{327.5, 18.5, 24, 10}, 3, p.th.bg)
	p.roundRect(rect{329, 20, 17, 7}, 1.5, p.th.text)
	p.roundRect(rect{354, 21, 2, 5}, 1, p.th.secondary)
}

// widget draws w and its children.
func (p *painter) widget(w *widget) {
	if w.hidden {
		return
	}
	th, r := p.th, w.r
	switch w.kind {
	case kindLargeTitle:
		p.text(w.text, 20, r.y+40, 32, true, th.text)
	case kindNavTitle:
		p.textCentered(w.text, r, 18, true, th.text)
		p.fill(rect{0, r.y + r.h - 0.5, screenWidth, 0.5}, th.separator)
	case kindBackButton:
		p.chevronLeft(r.x+10, r.y+r.h/2, th.accent)
		p.text(w.text, r.x+26, r.y+r.h/2+6, 17, false, th.accent)
	case kindSearchField:
		p.roundRect(r, 10, th.field)
		p.magnifier(r.x+18, r.y+r.h/2, th.placeholder)
		p.fieldText(w, rect{r.x + 34, r.y, r.w - 44, r.h})
		if w.focused {
			p.ring(r, 10, th.accent)
		}
	case kindTextField:
		p.roundRect(r, 10, th.surface)
		p.fieldText(w, rect{r.x + 14, r.y, r.w - 28, r.h})
		p.ring(r, 10, p.borderColor(w))
	case kindSecureField:
		// Dots, as a password field draws: the characters are never on screen.
		dots := *w
		dots.text = strings.Repeat("•", utf8.RuneCountInString(w.text))
		p.roundRect(r, 10, th.surface)
		p.fieldText(&dots, rect{r.x + 14, r.y, r.w - 28, r.h})
		p.ring(r, 10, p.borderColor(w))
	case kindTextArea:
		p.roundRect(r, 10, th.surface)
		p.paragraph(w, rect{r.x + 14, r.y + 10, r.w - 28, r.h - 20})
		p.ring(r, 10, p.borderColor(w))
	case kindList:
		visible := 0
		for _, c := range w.children {
			if c.kind == kindRow && !c.hidden {
				visible++
			}
		}
		if visible > 0 {
			p.fill(rect{0, r.y, screenWidth, float64(visible * rowHeight)}, th.surface)
		}
	case kindRow:
		p.text(p.ellipsize(w.label, r.w-120, 17, true), 20, r.y+29, 17, true, th.text)
		p.text(p.ellipsize(w.text, r.w-40, 15, false), 20, r.y+53, 15, false, th.secondary)
		dw := p.measure(w.detail, 14, false)
		p.text(w.detail, r.w-20-dw, r.y+29, 14, false, th.secondary)
		p.fill(rect{20, r.y + r.h - 0.5, r.w - 20, 0.5}, th.separator)
	case kindEmpty:
		p.textCentered(w.text, r, 15, false, th.secondary)
	case kindToggle:
		p.roundRect(r, 12, th.surface)
		p.text(w.label, r.x+16, r.y+r.h/2+6, 17, false, th.text)
		p.toggle(r.x+r.w-16-51, r.y+(r.h-31)/2, w.checked != nil && *w.checked)
	case kindButton, kindSecondaryButton, kindDestructiveButton:
		fill, ink := th.accent, th.onAccent
		switch {
		case w.disabled:
			fill, ink = th.disabledFill, th.disabledText
		case w.kind == kindSecondaryButton:
			fill, ink = th.surface, th.accent
		case w.kind == kindDestructiveButton:
			fill, ink = th.surface, th.destructive
		}
		p.roundRect(r, 12, fill)
		if w.kind == kindSecondaryButton && !w.disabled {
			p.ring(r, 12, th.accent)
		}
		p.textCentered(w.text, r, 17, true, ink)
	case kindCaption:
		p.text(strings.ToUpper(w.text), r.x, r.y+13, 13, false, th.secondary)
	case kindStatus:
		p.textCentered(p.ellipsize(w.text, r.w, 13, false), r, 13, false, th.secondary)
	case kindSmallButton:
		p.roundRect(r, 8, th.accent)
		p.textCentered(w.text, r, 15, true, th.onAccent)
	}
	for _, c := range w.children {
		p.widget(c)
	}
}

func (p *painter) borderColor(w *widget) color.RGBA {
	if w.focused {
		return p.th.accent
	}
	return p.th.border
}

// fieldText draws a single-line field's text (or placeholder) vertically centred, with a
// caret when focused. Text that does not fit shows its end, as a field scrolled to the
// caret does.
func (p *painter) fieldText(w *widget, r rect) {
	base := r.y + r.h/2 + 6
	if w.text == "" {
		p.text(w.placeholder, r.x, base, 17, false, p.th.placeholder)
		if w.focused {
			p.fill(rect{r.x, r.y + 10, 2, r.h - 20}, p.th.accent)
		}
		return
	}
	s := w.text
	for p.measure(s, 17, false) > r.w-4 && s != "" {
		_, n := utf8.DecodeRuneInString(s)
		s = s[n:]
	}
	p.text(s, r.x, base, 17, false, p.th.text)
	if w.focused {
		p.fill(rect{r.x + p.measure(s, 17, false) + 1, r.y + 10, 2, r.h - 20}, p.th.accent)
	}
}

// paragraph draws a text area's wrapped text from the top; lines that do not fit are cut
// with an ellipsis on the last visible one.
func (p *painter) paragraph(w *widget, r rect) {
	const size, lineH = 17.0, 23.0
	if w.text == "" {
		p.text(w.placeholder, r.x, r.y+17, size, false, p.th.placeholder)
		if w.focused {
			p.fill(rect{r.x, r.y + 2, 2, 20}, p.th.accent)
		}
		return
	}
	lines := p.wrap(w.text, r.w, size)
	maxLines := int(r.h / lineH)
	if len(lines) > maxLines {
		lines = lines[:maxLines]
		lines[maxLines-1] = p.ellipsize(lines[maxLines-1]+"…", r.w, size, false)
	}
	for i, l := range lines {
		p.text(l, r.x, r.y+17+float64(i)*lineH, size, false, p.th.text)
	}
	if w.focused && len(lines) > 0 {
		last := len(lines) - 1
		x := r.x + p.measure(lines[last], size, false) + 1
		p.fill(rect{x, r.y + 2 + float64(last)*lineH, 2, 20}, p.th.accent)
	}
}

// wrap breaks text into lines no wider than width: at newlines, then between words, and
// inside words that are wider than a line.
func (p *painter) wrap(text string, width, size float64) []string {
	var out []string
	for _, para := range strings.Split(text, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			candidate := word
			if line != "" {
				candidate = line + " " + word
			}
			if p.measure(candidate, size, false) <= width {
				line = candidate
				continue
			}
			if line != "" {
				out = append(out, line)
			}
			line = word
			for p.measure(line, size, false) > width {
				cut := len(line)
				for cut > 0 && p.measure(line[:cut], size, false) > width {
					_, n := utf8.DecodeLastRuneInString(line[:cut])
					cut -= n
				}
				if cut == 0 {
					break
				}
				out = append(out, line[:cut])
				line = line[cut:]
			}
		}
		out = append(out, line)
	}
	return out
}

// ellipsize shortens s with "…" until it fits width.
func (p *painter) ellipsize(s string, width, size float64, bold bool) string {
	if p.measure(s, size, bold) <= width {
		return s
	}
	s = strings.TrimSuffix(s, "…")
	for s != "" {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
		if p.measure(s+"…", size, bold) <= width {
			break
		}
	}
	return strings.TrimRight(s, " ") + "…"
}

// --- text ---

func (p *painter) face(size float64, bold bool) font.Face {
	k := faceKey{bold, size}
	if f := p.faces[k]; f != nil {
		return f
	}
	i := 0
	if bold {
		i = 1
	}
	f, err := opentype.NewFace(p.fonts[i], &opentype.FaceOptions{Size: size * p.scale, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		panic("demo: making a font face: " + err.Error()) // embedded fonts, positive sizes
	}
	p.faces[k] = f
	return f
}

// measure returns the advance of s in points.
func (p *painter) measure(s string, size float64, bold bool) float64 {
	return float64(font.MeasureString(p.face(size, bold), s)) / 64 / p.scale
}

// text draws s with its baseline at (x, y) points.
func (p *painter) text(s string, x, y, size float64, bold bool, c color.RGBA) {
	d := font.Drawer{Dst: p.img, Src: image.NewUniform(c), Face: p.face(size, bold),
		Dot: fixed.Point26_6{X: fixed.Int26_6(x * p.scale * 64), Y: fixed.Int26_6(y * p.scale * 64)}}
	d.DrawString(s)
}

// textCentered draws s centred in r.
func (p *painter) textCentered(s string, r rect, size float64, bold bool, c color.RGBA) {
	m := p.face(size, bold).Metrics()
	capHeight := float64(m.Ascent-m.Descent) / 64 / p.scale / 2
	p.text(s, r.x+(r.w-p.measure(s, size, bold))/2, r.y+r.h/2+capHeight*0.75, size, bold, c)
}

// --- shapes (anti-aliased with x/image/vector) ---

// path rasterises a shape given in points, within its bounding box r, and composites it.
func (p *painter) path(r rect, c color.RGBA, build func(z *vector.Rasterizer, ox, oy float64)) {
	x0, y0 := int(r.x*p.scale), int(r.y*p.scale)
	x1, y1 := int((r.x+r.w)*p.scale)+2, int((r.y+r.h)*p.scale)+2
	if x1 <= x0 || y1 <= y0 {
		return
	}
	p.z.Reset(x1-x0, y1-y0)
	p.z.DrawOp = draw.Over
	build(&p.z, float64(x0), float64(y0))
	p.z.Draw(p.img, image.Rect(x0, y0, x1, y1), image.NewUniform(c), image.Point{})
}

// roundRect fills r with corners of radius rad (points).
func (p *painter) roundRect(r rect, rad float64, c color.RGBA) {
	p.path(r, c, func(z *vector.Rasterizer, ox, oy float64) {
		p.contour(z, r, rad, ox, oy, false)
	})
}

// ring strokes the outline of a rounded rectangle, 1.5 points wide: the outer contour
// clockwise and the inner one anticlockwise, so non-zero winding leaves the inside empty.
func (p *painter) ring(r rect, rad float64, c color.RGBA) {
	const width = 1.5
	inner := rect{r.x + width, r.y + width, r.w - 2*width, r.h - 2*width}
	p.path(r, c, func(z *vector.Rasterizer, ox, oy float64) {
		p.contour(z, r, rad, ox, oy, false)
		p.contour(z, inner, max(0, rad-width), ox, oy, true)
	})
}

// contour adds a closed rounded-rectangle contour to z, in pixels relative to (ox, oy).
// Each corner is a quarter circle approximated by one cubic.
func (p *painter) contour(z *vector.Rasterizer, r rect, rad float64, ox, oy float64, anticlockwise bool) {
	s := p.scale
	x, y, w, h := r.x*s-ox, r.y*s-oy, r.w*s, r.h*s
	q := min(rad*s, w/2, h/2)
	k := q * 0.5523 // control distance of a quarter-circle cubic
	// The four corners clockwise from the top-right: where the edge before the corner
	// ends, the two control points, and where the corner ends.
	type corner struct{ start, c1, c2, end [2]float64 }
	cs := []corner{
		{[2]float64{x + w - q, y}, [2]float64{x + w - q + k, y}, [2]float64{x + w, y + q - k}, [2]float64{x + w, y + q}},
		{[2]float64{x + w, y + h - q}, [2]float64{x + w, y + h - q + k}, [2]float64{x + w - q + k, y + h}, [2]float64{x + w - q, y + h}},
		{[2]float64{x + q, y + h}, [2]float64{x + q - k, y + h}, [2]float64{x, y + h - q + k}, [2]float64{x, y + h - q}},
		{[2]float64{x, y + q}, [2]float64{x, y + q - k}, [2]float64{x + q - k, y}, [2]float64{x + q, y}},
	}
	if anticlockwise { // the same corners walked backwards
		for i, j := 0, len(cs)-1; i < j; i, j = i+1, j-1 {
			cs[i], cs[j] = cs[j], cs[i]
		}
		for i := range cs {
			c := &cs[i]
			c.start, c.end, c.c1, c.c2 = c.end, c.start, c.c2, c.c1
		}
	}
	f := func(v [2]float64) (float32, float32) { return float32(v[0]), float32(v[1]) }
	z.MoveTo(f(cs[0].start))
	for i, c := range cs {
		if i > 0 {
			z.LineTo(f(c.start))
		}
		c1x, c1y := f(c.c1)
		c2x, c2y := f(c.c2)
		ex, ey := f(c.end)
		z.CubeTo(c1x, c1y, c2x, c2y, ex, ey)
	}
	z.ClosePath()
}

// fill fills an axis-aligned rectangle.
func (p *painter) fill(r rect, c color.RGBA) { p.roundRect(r, 0, c) }

// circle fills a circle of radius rad around (cx, cy).
func (p *painter) circle(cx, cy, rad float64, c color.RGBA) {
	p.roundRect(rect{cx - rad, cy - rad, 2 * rad, 2 * rad}, rad, c)
}

// toggle draws a 51×31 switch at (x, y).
func (p *painter) toggle(x, y float64, on bool) {
	track, knobX := p.th.toggleOff, x+15.5
	if on {
		track, knobX = p.th.toggleOn, x+51-15.5
	}
	p.roundRect(rect{x, y, 51, 31}, 15.5, track)
	p.circle(knobX, y+15.5+0.75, 13.5, color.RGBA{0, 0, 0, 0x22}) // soft shadow
	p.circle(knobX, y+15.5, 13.5, rgb(0xFFFFFF))
}

// magnifier draws a search glyph centred at (cx, cy).
func (p *painter) magnifier(cx, cy float64, c color.RGBA) {
	p.circle(cx-1.5, cy-1.5, 6.5, c)
	p.circle(cx-1.5, cy-1.5, 4.7, p.th.field)
	s := p.scale
	p.path(rect{cx + 1, cy + 1, 8, 8}, c, func(z *vector.Rasterizer, ox, oy float64) {
		pt := func(a, b float64) (float32, float32) { return float32(a*s - ox), float32(b*s - oy) }
		z.MoveTo(pt(cx+2.2, cy+3.6))
		z.LineTo(pt(cx+3.6, cy+2.2))
		z.LineTo(pt(cx+7.8, cy+6.4))
		z.LineTo(pt(cx+6.4, cy+7.8))
		z.ClosePath()
	})
}

// chevronLeft draws a "<" glyph whose point is at (x, y).
func (p *painter) chevronLeft(x, y float64, c color.RGBA) {
	s := p.scale
	p.path(rect{x - 1, y - 11, 12, 22}, c, func(z *vector.Rasterizer, ox, oy float64) {
		pt := func(a, b float64) (float32, float32) { return float32(a*s - ox), float32(b*s - oy) }
		z.MoveTo(pt(x, y))
		z.LineTo(pt(x+8.5, y-9.5))
		z.LineTo(pt(x+10.5, y-7.5))
		z.LineTo(pt(x+3.8, y))
		z.LineTo(pt(x+10.5, y+7.5))
		z.LineTo(pt(x+8.5, y+9.5))
		z.ClosePath()
	})
}
