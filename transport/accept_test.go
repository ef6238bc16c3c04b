package transport

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestCheckUpgrade: only what Accept would upgrade passes; everything else gets the status
// Accept would answer with.
func TestCheckUpgrade(t *testing.T) {
	upgrade := func(mutate func(r *http.Request)) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/ws", nil)
		r.Header.Set("Connection", "keep-alive, Upgrade")
		r.Header.Set("Upgrade", "websocket")
		r.Header.Set("Sec-WebSocket-Version", "13")
		r.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
		if mutate != nil {
			mutate(r)
		}
		return r
	}
	cases := []struct {
		name   string
		r      *http.Request
		status int
	}{
		{"Valid", upgrade(nil), 0},
		{"Post", upgrade(func(r *http.Request) { r.Method = http.MethodPost }), http.StatusMethodNotAllowed},
		{"PlainGet", httptest.NewRequest(http.MethodGet, "/ws", nil), http.StatusUpgradeRequired},
		{"NoUpgradeHeader", upgrade(func(r *http.Request) { r.Header.Del("Upgrade") }), http.StatusUpgradeRequired},
		{"HTTP10", upgrade(func(r *http.Request) { r.ProtoMajor, r.ProtoMinor, r.Proto = 1, 0, "HTTP/1.0" }), http.StatusUpgradeRequired},
		{"Version8", upgrade(func(r *http.Request) { r.Header.Set("Sec-WebSocket-Version", "8") }), http.StatusBadRequest},
		{"NoKey", upgrade(func(r *http.Request) { r.Header.Del("Sec-WebSocket-Key") }), http.StatusBadRequest},
		{"ShortKey", upgrade(func(r *http.Request) { r.Header.Set("Sec-WebSocket-Key", "c2hvcnQ=") }), http.StatusBadRequest},
		{"TwoKeys", upgrade(func(r *http.Request) { r.Header.Add("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==") }), http.StatusBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, err := CheckUpgrade(tc.r)
			if status != tc.status || (err == nil) != (tc.status == 0) {
				t.Fatalf("CheckUpgrade: %d %v, want %d", status, err, tc.status)
			}
		})
	}
}
