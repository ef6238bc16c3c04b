package notes

import (
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/app/ui"
)

// fixedClock is a settable clock for the model.
type fixedClock struct{ t time.Time }

func (c *fixedClock) now() time.Time { return c.t }

func newTestModel(t *testing.T, opts Options) (*Model, *fixedClock) {
	t.Helper()
	c := &fixedClock{time.Date(2025, 3, 14, 9, 41, 0, 0, time.UTC)}
	opts.Now = c.now
	return New(opts), c
}

// saveRender writes img to $DEMO_RENDER_DIR/name.png when the variable is set, to look at
// the screens by eye.
func saveRender(t *testing.T, name string, img image.Image) {
	dir := os.Getenv("DEMO_RENDER_DIR")
	if dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(dir, name+".png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
}

// act performs an action on a node through the Screen interface.
func act(t *testing.T, m *Model, id, action string, value any) map[string]any {
	t.Helper()
	out, err := m.Perform(context.Background(), id, ui.Action{Name: action, Value: value})
	if err != nil {
		t.Fatalf("%s %s: %v", id, action, err)
	}
	return out
}

func renderOf(t *testing.T, m *Model) *image.RGBA {
	t.Helper()
	img, err := m.Render(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return img.(*image.RGBA)
}

// distinctColors counts the different pixel values of img (up to limit).
func distinctColors(img *image.RGBA, limit int) int {
	seen := map[[4]uint8]bool{}
	for i := 0; i+3 < len(img.Pix) && len(seen) < limit; i += 4 {
		seen[[4]uint8(img.Pix[i:i+4])] = true
	}
	return len(seen)
}

// differs counts the pixels in which two images of equal size differ.
func differs(a, b *image.RGBA) int {
	n := 0
	for i := 0; i+3 < len(a.Pix); i += 4 {
		if [4]uint8(a.Pix[i:i+4]) != [4]uint8(b.Pix[i:i+4]) {
			n++
		}
	}
	return n
}

func TestRender(t *testing.T) {
	m, _ := newTestModel(t, Options{})
	list := renderOf(t, m)
	saveRender(t, "list-light", list)
	if b := list.Bounds(); b.Dx() != screenWidth || b.Dy() != screenHeight {
		t.Fatalf("size %v, want %dx%d", b, screenWidth, screenHeight)
	}
	// Text is anti-aliased: a screen with text has many shades, a blank one has one.
	if n := distinctColors(list, 100); n < 50 {
		t.Errorf("only %d colours: the screen looks blank", n)
	}
	if c := list.RGBAAt(200, 500); c != lightTheme.bg {
		t.Errorf("light background = %v", c)
	}
	if again := renderOf(t, m); differs(list, again) != 0 {
		t.Error("rendering the same state twice gave different images")
	}

	// Each change of state shows.
	m.signIn("ada")
	signedIn := renderOf(t, m)
	if differs(list, signedIn) == 0 {
		t.Error("signing in (Sync enabled, status) changed nothing on screen")
	}
	act(t, m, "list.search", ui.ActionTypeText, "o")
	searching := renderOf(t, m)
	saveRender(t, "list-search", searching)
	if differs(signedIn, searching) == 0 {
		t.Error("typing into the search field changed nothing on screen")
	}
	act(t, m, "list.search", ui.ActionSetValue, "")
	act(t, m, "list.darkMode", ui.ActionToggle, nil)
	dark := renderOf(t, m)
	saveRender(t, "list-dark", dark)
	if c := dark.RGBAAt(200, 500); c != darkTheme.bg {
		t.Errorf("dark background = %v", c)
	}
	if n := differs(signedIn, dark); n < screenWidth*screenHeight/2 {
		t.Errorf("dark mode changed only %d pixels", n)
	}
	act(t, m, "note.n2", ui.ActionTap, nil)
	act(t, m, "editor.body", ui.ActionTypeText, " And a long line that has to wrap around inside the body field of the editor.")
	editor := renderOf(t, m)
	saveRender(t, "editor-dark", editor)
	if differs(dark, editor) == 0 {
		t.Error("the editor looks like the list")
	}
	act(t, m, "editor.back", ui.ActionTap, nil)
	act(t, m, "list.darkMode", ui.ActionToggle, nil)
	act(t, m, "list.add", ui.ActionTap, nil)
	saveRender(t, "editor-new", renderOf(t, m))
}

func TestRenderScale(t *testing.T) {
	m, _ := newTestModel(t, Options{Scale: 2})
	img := renderOf(t, m)
	saveRender(t, "list-2x", img)
	if b := img.Bounds(); b.Dx() != 2*screenWidth || b.Dy() != 2*screenHeight {
		t.Fatalf("size at scale 2 = %v", b)
	}
}

func TestRenderLongText(t *testing.T) {
	m, _ := newTestModel(t, Options{})
	long := strings.Repeat("Supercalifragilisticexpialidocious ", 5)
	m.createNote(long, strings.Repeat(long+"\n", 20))
	saveRender(t, "list-long", renderOf(t, m))
	act(t, m, "note.n4", ui.ActionTap, nil)
	act(t, m, "editor.body", ui.ActionFocus, nil)
	act(t, m, "editor.titleField", ui.ActionTypeText, strings.Repeat("W", 20))
	saveRender(t, "editor-long", renderOf(t, m)) // must not panic or loop; ellipses and clipping by eye
}
