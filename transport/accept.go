package transport

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/coder/websocket"
)

// AcceptOptions configures Accept. The zero value is ready to use.
type AcceptOptions struct {
	// ReadLimit is the largest message accepted, in bytes (DefaultReadLimit when zero). A
	// larger message closes the connection with StatusMessageTooBig.
	ReadLimit int64
	// KeepAlive enables pings; disabled when zero.
	KeepAlive KeepAlive
	// CompressionMode accepts permessage-deflate when the client offers it; disabled when
	// zero.
	CompressionMode CompressionMode
}

// Accept upgrades an HTTP request to a WebSocket connection. On failure it has already
// written an HTTP error response.
//
// Accept checks only that the request is a valid upgrade. It applies no Origin policy of its
// own: the protocol's clients are apps, not browsers, and the host rejects any request that
// carries an Origin header (and checks Host and the credential) before calling Accept. A
// caller exposing Accept elsewhere must do the same.
func Accept(w http.ResponseWriter, r *http.Request, opts AcceptOptions) (Conn, error) {
	mode, err := opts.CompressionMode.websocket()
	if err != nil {
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
		return nil, err
	}
	signs := new(lifeSigns)
	var cw *combiningWriter
	if combineWrites && canHijack(w) {
		cw = &combiningWriter{ResponseWriter: w}
		w = cw
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		InsecureSkipVerify: true, // origin policy is the caller's, see above
		CompressionMode:    mode,
		OnPingReceived:     signs.ping,
		OnPongReceived:     signs.pong,
	})
	if err != nil {
		return nil, fmt.Errorf("transport: accept: %w", err)
	}
	var comb *combiner
	if cw != nil {
		comb = cw.c
	}
	return newWSConn(ws, comb, opts.ReadLimit, opts.KeepAlive, signs), nil
}

// CheckUpgrade reports whether r is a WebSocket upgrade request that Accept would take:
// HTTP/1.1 or later, GET, "Connection: Upgrade", "Upgrade: websocket", version 13 and one
// valid Sec-WebSocket-Key. It returns the HTTP status to refuse it with otherwise. A
// server that authenticates upgrades with single-use credentials calls it first, so that
// a plain request never uses a credential up.
func CheckUpgrade(r *http.Request) (status int, err error) {
	switch {
	case !r.ProtoAtLeast(1, 1):
		return http.StatusUpgradeRequired, fmt.Errorf("transport: %s is not a WebSocket upgrade (HTTP/1.1 or later needed)", r.Proto)
	case !headerHasToken(r.Header, "Connection", "upgrade") || !headerHasToken(r.Header, "Upgrade", "websocket"):
		return http.StatusUpgradeRequired, errors.New("transport: not a WebSocket upgrade request")
	case r.Method != http.MethodGet:
		return http.StatusMethodNotAllowed, fmt.Errorf("transport: a WebSocket upgrade is a GET, not %s", r.Method)
	case r.Header.Get("Sec-WebSocket-Version") != "13":
		return http.StatusBadRequest, errors.New("transport: only WebSocket version 13 is supported")
	}
	keys := r.Header.Values("Sec-WebSocket-Key")
	if len(keys) != 1 {
		return http.StatusBadRequest, errors.New("transport: an upgrade needs exactly one Sec-WebSocket-Key")
	}
	if k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(keys[0])); err != nil || len(k) != 16 {
		return http.StatusBadRequest, errors.New("transport: invalid Sec-WebSocket-Key")
	}
	return 0, nil
}

// headerHasToken reports whether the comma-separated values of header key hold token,
// case-insensitively.
func headerHasToken(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}
