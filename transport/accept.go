package transport

import (
	"fmt"
	"net/http"

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
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		InsecureSkipVerify: true, // origin policy is the caller's, see above
		CompressionMode:    mode,
	})
	if err != nil {
		return nil, fmt.Errorf("transport: accept: %w", err)
	}
	return newWSConn(ws, opts.ReadLimit, opts.KeepAlive), nil
}
