package notes

import (
	"bytes"
	"context"
	"fmt"
	"image/jpeg"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app/ui"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/uiauto"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/uitree"
)

// driver runs UI operations on the demo as the host's UI automation does.
func driver(t *testing.T, h *harness) func(req uiauto.Request) *uiauto.Outcome {
	call := func(ctx context.Context, toolID string, args jsontext.Value) (jsontext.Value, error) {
		r := h.SendContext(ctx, wire.TypeCall, fmt.Sprintf(`{"toolId":%q,"arguments":%s}`, toolID, args))
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Result.Result, nil
	}
	return func(req uiauto.Request) *uiauto.Outcome {
		t.Helper()
		out, err := uiauto.Run(context.Background(), call, req)
		if err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
		return out
	}
}

func text(s string) *string { return &s }

// TestDriveTheDemo: the demo's screen as the UI verbs see it — the back button marked as
// back navigation, the list scrolling a page per swipe, the Synced banner's OK button
// appearing a second after a sync starts, a field typed into.
func TestDriveTheDemo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, m := newApp(t, Options{Now: time.Now}, catalog.GuardFullAccess)
		for i := range 10 {
			m.createNote(fmt.Sprintf("Note %02d", i), "")
		}
		do := driver(t, h)
		// 13 notes, 7 rows a page: the oldest sample is below the list's frame.
		if out := do(uiauto.Request{Operation: uiauto.OpTap, Selector: uitree.Selector{Text: "Groceries"}, TimeoutMs: new(int)}); out.Code != uiauto.CodeNotActionable || !strings.Contains(out.Message, "is not visible") {
			t.Fatalf("a row scrolled away: %+v", out)
		}
		if out := do(uiauto.Request{Operation: uiauto.OpSwipe, Selector: uitree.Selector{AutomationID: "notesList"}}); !out.Succeeded || !strings.Contains(string(out.Result.Outcome), `"firstRow":6`) || m.offset != 6 {
			t.Fatalf("swipe up: %+v %s", out, out.Result.Outcome)
		}
		if out := do(uiauto.Request{Operation: uiauto.OpTap, Selector: uitree.Selector{Text: "Groceries"}}); !out.Succeeded {
			t.Fatalf("the row after the swipe: %+v", out)
		}
		if out := do(uiauto.Request{Operation: uiauto.OpType, Selector: uitree.Selector{AutomationID: "titleField"}, Value: text("Shopping")}); !out.Succeeded || m.editTitle != "Shopping" {
			t.Fatalf("type: %+v", out)
		}
		if out := do(uiauto.Request{Operation: uiauto.OpBack}); !out.Succeeded || out.Result.Target.ID != "editor.back" || m.screen != screenList {
			t.Fatalf("back: %+v", out)
		}

		m.signIn("ada")
		do(uiauto.Request{Operation: uiauto.OpTap, Selector: uitree.Selector{AutomationID: "syncButton"}})
		start := time.Now()
		out := do(uiauto.Request{Operation: uiauto.OpTap, Selector: uitree.Selector{AutomationID: "syncedOkButton"}})
		if !out.Succeeded || time.Since(start) != syncDuration || out.Result.WaitedMs != 1000 {
			t.Fatalf("the banner's OK button, a second later: %+v after %v", out, time.Since(start))
		}
		if out := do(uiauto.Request{Operation: uiauto.OpAssert, Selector: uitree.Selector{AutomationID: "syncedOkButton"}, ExpectedVisible: new(bool)}); !out.Succeeded {
			t.Fatalf("dismissed: %+v", out)
		}
	})
}

// TestOverlayInLiveFrames: an overlay an agent shows over a node is in the frames the demo
// streams (ui.FrameSource of its Screen), not only in its screenshots.
func TestOverlayInLiveFrames(t *testing.T) {
	h, m := newApp(t, Options{}, catalog.GuardFullAccess)
	frames := ui.FrameSource(m.Screen())
	before, _, _, err := frames(t.Context(), 0, 90)
	if err != nil {
		t.Fatal(err)
	}
	h.Call("ui.get_visual_tree", `{}`)
	h.Call("ui.show_overlay", `{"nodeId":"list.add","strokeColor":"#F0F","strokeWidth":6,"durationMs":0}`)
	after, _, _, err := frames(t.Context(), 0, 90)
	if err != nil {
		t.Fatal(err)
	}
	img, err := jpeg.Decode(bytes.NewReader(after))
	if err != nil {
		t.Fatal(err)
	}
	// The Add note button's left edge, x=16 points at scale 1: magenta now.
	r, g, b, _ := img.At(16, 757).RGBA()
	if bytes.Equal(before, after) || r>>8 < 180 || g>>8 > 90 || b>>8 < 180 {
		t.Fatalf("the overlay is not in the live frame: %d %d %d", r>>8, g>>8, b>>8)
	}
}
