package notes

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ansight-go/ansight/app/ui"
	"github.com/ansight-go/ansight/catalog"
)

// seenRequests is an http.RoundTripper that keeps what went through it, as the telemetry
// package's does before it reports a request.
type seenRequests struct {
	mu   sync.Mutex
	reqs []string
}

func (s *seenRequests) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	line := r.Method + " " + r.URL.Path + " auth=" + r.Header.Get("Authorization")
	if err == nil {
		line += " " + resp.Status
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, line)
	s.mu.Unlock()
	return resp, err
}

func (s *seenRequests) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

// TestSyncOverHTTP: with its sync server, the demo's syncs (sync.push, the Sync button)
// are real HTTP requests through the RoundTripper it is given; without the server, or
// with it stopped, sync.push fails retryably and the changes stay pending.
func TestSyncOverHTTP(t *testing.T) {
	clock := &fixedClock{time.Date(2025, 3, 14, 9, 41, 0, 0, time.UTC)}
	h, m := newApp(t, Options{Now: clock.now}, catalog.GuardFullAccess)
	seen := &seenRequests{}
	stop, err := m.ServeSync(seen)
	if err != nil {
		t.Fatal(err)
	}
	h.Call("account.sign_in", `{"userName":"ada"}`)
	for want := 1.0; want <= 2; want++ {
		res, _ := h.Call("sync.push", `{}`)
		if p := obj(t, res); p["revision"] != want || p["account"] != "ada" {
			t.Errorf("push %v = %v", want, p)
		}
	}
	reqs := seen.list()
	if len(reqs) != 2 || !strings.HasPrefix(reqs[0], "PUT /v1/accounts/ada/notes auth=Bearer ") || !strings.HasSuffix(reqs[0], " 200 OK") {
		t.Errorf("requests = %q", reqs)
	}

	// The Sync button uploads beside its progress.
	act(t, m, "list.sync", ui.ActionTap, nil)
	m.sync.uploads.Wait()
	if reqs := seen.list(); len(reqs) != 3 {
		t.Errorf("after the Sync button: requests = %q", reqs)
	}

	clock.t = clock.t.Add(syncDuration)
	if s := m.state().Status; !strings.HasPrefix(s, "Synced 3 notes") {
		t.Errorf("status after the Sync button = %q", s)
	}

	// The server gone: sync.push fails, retryably, and nothing is marked synced; the Sync
	// button says so when its progress ends.
	gone := m.sync.base
	stop()
	m.sync = &syncClient{base: gone, token: "x", client: &http.Client{Transport: seen}}
	h.Call("notes.create", `{"title":"Unsent"}`)
	err2 := h.Fail("sync.push", `{}`)
	if err2.Code != CodeSyncFailed || !err2.Retryable {
		t.Errorf("push without a server = %+v", err2)
	}
	if s := m.syncStatus(); s.PendingChanges != 1 {
		t.Errorf("pending after a failed push = %d, want 1", s.PendingChanges)
	}
	act(t, m, "list.sync", ui.ActionTap, nil)
	m.sync.uploads.Wait()
	clock.t = clock.t.Add(syncDuration)
	if s := m.syncStatus(); s.PendingChanges != 1 || !strings.HasPrefix(m.state().Status, "Sync failed: ") {
		t.Errorf("after a failed Sync: pending %d, status %q", s.PendingChanges, m.state().Status)
	}
}
