package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
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

// TestPlayerArchive: 'ansight player --archive' serves a player of its own over an archive
// (here an SDK's encrypted offline capture) with no host: the URL it prints opens the
// recording's timeline with a token of its own, the API lists the archive's recording and
// serves its records, what needs a host says so, and Ctrl-C ends it with exit 0, leaving no
// temporary store behind.
func TestPlayerArchive(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the archive is unpacked
	archive, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "recording", "testdata", "offline-capture-aes.zip"))
	if err != nil {
		t.Fatal(err)
	}
	const id = "0198c1d2e3f4a5b6c7d8e9f0a1b2c3d4"
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out, w := io.Pipe()
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- Main(ctx, Env{Args: []string{"player", "--archive", archive, "--password-env", "CAPTURE", "--state-dir", t.TempDir()},
			Stdout: w, Stderr: &stderr, LookupEnv: func(k string) (string, bool) { return "correct horse battery", k == "CAPTURE" }})
		w.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL printed (%v): %s", err, stderr.String())
	}
	go io.Copy(io.Discard, out)
	u, err := url.Parse(strings.TrimSpace(line))
	if err != nil || u.Fragment != "/s/"+id+"/timeline" || u.Query().Get("token") == "" || !strings.HasPrefix(u.Host, "127.0.0.1:") {
		t.Fatalf("printed %q", line)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	get := func(path string) (int, string) {
		resp, err := c.Get("http://" + u.Host + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, _ := get("/?" + u.RawQuery); st != http.StatusOK { // the redirect that sets the cookie, then the page
		t.Fatalf("the page: %d", st)
	}
	// The page learns from the status that it reads an archive, and says so instead of "live".
	if st, body := get("/api/status"); st != http.StatusOK || !strings.Contains(body, `"archive":"offline-capture-aes.zip"`) {
		t.Errorf("status: %d %s", st, body)
	}
	if st, body := get("/api/recordings"); st != http.StatusOK || !strings.Contains(body, `"id":"`+id+`"`) || !strings.Contains(body, `"origin":"import"`) {
		t.Errorf("recordings: %d %s", st, body)
	}
	if st, body := get("/api/sessions/" + id + "/recording?kind=touch"); st != http.StatusOK || !strings.Contains(body, "up #0 (121, 301.5)") {
		t.Errorf("records: %d %s", st, body)
	}
	if st, body := get("/api/sessions/" + id + "/tools"); st != http.StatusServiceUnavailable || !strings.Contains(body, "this is the archive offline-capture-aes.zip, read without a host") {
		t.Errorf("tools: %d %s", st, body)
	}
	cancel()
	if got := <-code; got != ExitOK {
		t.Errorf("exit %d after Ctrl-C: %s", got, stderr.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left %v in the temporary directory", left)
	}
	if !strings.Contains(stderr.String(), "serving the archive") {
		t.Errorf("stderr: %s", stderr.String())
	}
}
