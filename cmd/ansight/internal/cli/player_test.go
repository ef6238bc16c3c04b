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

// TestPlayerToken: the kept token is reused, a file that is not private or holds anything
// else is replaced, and renew replaces it.
func TestPlayerToken(t *testing.T) {
	dir := t.TempDir()
	a, err := playerToken(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := playerToken(dir, false); b != a {
		t.Errorf("the kept token was not reused")
	}
	path := filepath.Join(dir, playerTokenName)
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	os.Chmod(path, 0o644)
	if b, _ := playerToken(dir, false); b == a {
		t.Errorf("a token others can read was reused")
	}
	os.WriteFile(path, []byte("short\n"), 0o600)
	if b, _ := playerToken(dir, false); b == "short" {
		t.Errorf("a malformed token was reused")
	}
	c, _ := playerToken(dir, false)
	if d, _ := playerToken(dir, true); d == c {
		t.Errorf("renew kept the token")
	}
}
