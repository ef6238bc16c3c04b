package ui_test

import (
	"context"
	"testing"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/internal/transcript"
	"github.com/ansight-go/ansight/app/ui"
)

// The transcripts in testdata/transcripts replay requests exactly as the official host
// writes them (envelope with null replyTo, its ansight.call.<guid> ids, a +00:00 sentAt,
// "after":null, and the default arguments it adds: maxDepth 32 and includeComputedStyles
// false for ui.get_visual_tree; format jpeg, quality 80, maxWidth 1280 and
// afterScreenUpdates false for ui.get_screenshot) against the toolkit over the test
// screen, and compare every answer byte for byte (package app/internal/transcript renders
// them). The app's clock, its transfer ids and the snapshot ids are pinned.
//
// go test ./app/ui -run TestTranscripts -update rewrites the expect sections.
func TestTranscripts(t *testing.T) {
	t.Parallel()
	transcript.Check(t, "testdata/transcripts/*.txtar", replay)
}

func replay(t *testing.T, ar transcript.Archive) []string {
	a := app.New(app.Options{Clock: func() time.Time { return pinnedNow }, IDs: transcript.CountingIDs()})
	if err := ui.Register(a, &fakeScreen{}, ui.Options{Now: func() time.Time { return pinnedNow }, IDs: transcript.CountingIDs(), Platform: "linux"}); err != nil {
		t.Fatal(err)
	}
	return transcript.Replayer{
		Handle: func(msg []byte, rec *transcript.Recorder) (bool, error) {
			return a.Handle(context.Background(), msg, rec)
		},
	}.Replay(t, ar)
}
