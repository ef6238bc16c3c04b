package recording

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A session's label is kept with its recording: listed by Sessions, Session and Labels,
// there after the host restarts (the store reopened), removed by an empty label, and
// refused by a read-only store and when too long. Writing the session's records and
// state afterwards leaves it.
func TestRename(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := t.Context()
	w, err := Open(Options{Dir: dir, MinFrameInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	sess := liveRecording(t, w)
	if err := w.Rename(ctx, sess, "checkout on the Pixel"); err != nil {
		t.Fatal(err)
	}
	w.RecordSession(sess, "disconnected", time.Now(), []byte(`{"id":"`+sess+`","appId":"a"}`))
	waitIdle(t, w)
	if err := w.Rename(ctx, sess, strings.Repeat("x", MaxLabel+1)); err == nil {
		t.Error("a label longer than MaxLabel was taken")
	}
	if err := w.Rename(ctx, "not-yet-recorded", "early"); err != nil {
		t.Fatal(err)
	}
	w.Close()

	r, err := Open(Options{Dir: dir, MinFrameInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Session(ctx, sess)
	if err != nil || s.Label != "checkout on the Pixel" || s.State != "disconnected" || s.Records == 0 {
		t.Fatalf("after a restart: Session = %+v, %v", s, err)
	}
	labels, err := r.Labels(ctx)
	if err != nil || len(labels) != 2 || labels[sess] != "checkout on the Pixel" || labels["not-yet-recorded"] != "early" {
		t.Fatalf("Labels = %v, %v", labels, err)
	}
	if err := r.Rename(ctx, sess, ""); err != nil {
		t.Fatal(err)
	}
	if s, _ := r.Session(ctx, sess); s.Label != "" {
		t.Errorf("an empty label left %q", s.Label)
	}
	r.Close()

	ro, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if err := ro.Rename(ctx, sess, "x"); !errors.Is(err, ErrReadOnly) {
		t.Errorf("read-only Rename = %v, want ErrReadOnly", err)
	}
	if list, _ := ro.Sessions(ctx); len(list) != 2 {
		t.Errorf("read-only Sessions lists %d recordings, want 2", len(list))
	}
}
