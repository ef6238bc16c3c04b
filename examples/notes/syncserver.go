package notes

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ansight-go/ansight/pairing"
)

// The demo's sync goes over HTTP when ServeSync has started its sync server: a real
// request, made through the http.RoundTripper the caller gives (the telemetry package's,
// in the demo), so that every sync shows as a network request in the session's
// recording, with its credentials redacted. Without it (tests, benchmarks, the
// conformance run) a sync only changes the model.

// Bounds of the sync server.
const (
	maxSyncBody  = 16 << 20
	syncTimeout  = 10 * time.Second
	syncNotesFmt = "/v1/accounts/%s/notes"
)

// syncUpload is the body of a sync: the account's notes.
type syncUpload struct {
	Notes []Note `json:"notes"`
}

// syncReceipt is the sync server's answer.
type syncReceipt struct {
	Account  string `json:"account"`
	Notes    int    `json:"notes"`
	Revision int    `json:"revision"`
}

// syncServer keeps the notes each account uploaded; it answers only requests carrying its
// token.
type syncServer struct {
	token string
	mu    sync.Mutex
	revs  map[string]int
}

func (s *syncServer) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("PUT "+fmt.Sprintf(syncNotesFmt, "{account}"), func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+s.token)) != 1 {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		var in syncUpload
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSyncBody))
		if err == nil {
			err = json.Unmarshal(body, &in)
		}
		if err != nil {
			http.Error(w, "bad notes: "+err.Error(), http.StatusBadRequest)
			return
		}
		account := r.PathValue("account")
		s.mu.Lock()
		s.revs[account]++
		rev := s.revs[account]
		s.mu.Unlock()
		out, _ := json.Marshal(syncReceipt{Account: account, Notes: len(in.Notes), Revision: rev})
		w.Header().Set("Content-Type", "application/json")
		w.Write(out)
	})
	return mux
}

// syncClient uploads an account's notes to the sync server.
type syncClient struct {
	base   string
	token  string
	client *http.Client
	// uploads counts the uploads the Sync button started, which run beside its progress.
	uploads sync.WaitGroup
}

// upload sends the notes and returns the server's revision of the account's notes.
func (c *syncClient) upload(ctx context.Context, account string, notes []Note) (int, error) {
	if notes == nil {
		notes = []Note{}
	}
	body, err := json.Marshal(syncUpload{Notes: notes})
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, c.base+fmt.Sprintf(syncNotesFmt, url.PathEscape(account)), bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("the sync server answered %s", resp.Status)
	}
	var r syncReceipt
	if err := json.Unmarshal(answer, &r); err != nil {
		return 0, fmt.Errorf("the sync server's answer: %w", err)
	}
	return r.Revision, nil
}

// ServeSync starts the demo's sync server on a loopback port and makes the app's syncs
// (sync.push and the Sync button) upload the notes to it through rt
// (http.DefaultTransport when nil). Give it the telemetry package's RoundTripper and
// every sync is reported to the host as a network request. stop shuts the server down
// once the uploads under way have ended.
func (m *Model) ServeSync(rt http.RoundTripper) (stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo: the sync server: %w", err)
	}
	s := &syncServer{token: pairing.NewToken(16), revs: map[string]int{}}
	srv := &http.Server{Handler: s.routes(), ReadHeaderTimeout: syncTimeout}
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.Serve(ln)
	}()
	c := &syncClient{base: "http://" + ln.Addr().String(), token: s.token, client: &http.Client{Transport: rt}}
	m.mu.Lock()
	m.sync = c
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		if m.sync == c {
			m.sync = nil // no new uploads: the Sync button starts them holding mu
		}
		m.mu.Unlock()
		c.uploads.Wait()
		srv.Close()
		<-served
		c.client.CloseIdleConnections()
	}, nil
}

// errSignedOut is upload's failure when no account is signed in.
var errSignedOut = errors.New("no account is signed in")

// upload sends the notes to the sync server, when there is one, and returns its
// revision (0 without a server).
func (m *Model) upload(ctx context.Context) (int, error) {
	m.mu.Lock()
	c, account, notes := m.sync, m.account, append([]Note(nil), m.notes...)
	m.mu.Unlock()
	switch {
	case account == "":
		return 0, errSignedOut
	case c == nil:
		return 0, nil
	}
	return c.upload(ctx, account, notes)
}

// uploadInBackground starts the upload of the Sync button, which runs beside the
// button's progress; a failure shows when the progress ends. Callers hold mu.
func (m *Model) uploadInBackground() {
	c := m.sync
	if c == nil {
		return
	}
	account, notes := m.account, append([]Note(nil), m.notes...)
	c.uploads.Go(func() {
		_, err := c.upload(context.Background(), account, notes)
		if err != nil {
			m.mu.Lock()
			if !m.syncUntil.IsZero() { // else the progress has ended: too late to say
				m.syncErr = err
			}
			m.mu.Unlock()
		}
	})
}
