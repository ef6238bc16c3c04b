package cli

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestOpenBrowser: 'ansight player open' hands the URL to $BROWSER as one argument (never
// through a shell).
func TestOpenBrowser(t *testing.T) {
	dir := t.TempDir()
	got := filepath.Join(dir, "opened")
	script := filepath.Join(dir, "browser")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s|%s' \"$#\" \"$1\" > "+got+".tmp && mv "+got+".tmp "+got+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", script)
	const url = "http://127.0.0.1:47231/?token=a;b&c=$(id)"
	if err := openBrowser(t.Context(), url); err != nil {
		t.Fatal(err)
	}
	for {
		b, err := os.ReadFile(got)
		if err == nil {
			if string(b) != "1|"+url {
				t.Fatalf("the browser got %q", b)
			}
			return
		}
		if t.Context().Err() != nil {
			t.Fatal("the browser was not started")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
