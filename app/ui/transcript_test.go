package ui_test

import (
	"bytes"
	"context"
	"flag"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/ui"
	"github.com/ansight-go/ansight/internal/transcript"
)

var update = flag.Bool("update", false, "rewrite the expected output of the transcripts in testdata/transcripts")

// The transcripts in testdata/transcripts replay requests exactly as the official host
// writes them (envelope with null replyTo, its ansight.call.<guid> ids, a +00:00 sentAt,
// "after":null, and the default arguments it adds: maxDepth 32 and includeComputedStyles
// false for ui.get_visual_tree; format jpeg, quality 80, maxWidth 1280 and
// afterScreenUpdates false for ui.get_screenshot) against the toolkit over the test
// screen, and compare every answer byte for byte (package internal/transcript renders
// them). The app's clock, its transfer ids and the snapshot ids are pinned.
//
// go test ./app/ui -run TestTranscripts -update rewrites the expect sections.
func TestTranscripts(t *testing.T) {
	transcript.Check(t, "testdata/transcripts/*.txtar", *update, func(t *testing.T, ar transcript.Archive) []string {
		var got []string
		// synctest: ui.wait's polls pass in fake time, so elapsedMilliseconds is exact.
		synctest.Test(t, func(t *testing.T) { got = replay(t, ar) })
		return got
	})
}

func replay(t *testing.T, ar transcript.Archive) []string {
	a := app.New(app.Options{Clock: func() time.Time { return pinnedNow }, IDs: transcript.CountingIDs()})
	if err := ui.Register(a, &fakeScreen{}, ui.Options{Now: func() time.Time { return pinnedNow }, IDs: transcript.CountingIDs()}); err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(ar.Files))
	var last []transcript.Message
	for i, sec := range ar.Files {
		switch sec.Name {
		case "send":
			var rec transcript.Recorder
			if ok, err := a.Handle(context.Background(), bytes.TrimSpace(sec.Data), &rec); !ok || err != nil {
				t.Fatalf("section %d: Handle = %v, %v", i, ok, err)
			}
			last = rec.Take()
		case "expect":
			got[i] = transcript.Render(t, last)
		default:
			t.Fatalf("unknown section %q", sec.Name)
		}
	}
	return got
}
