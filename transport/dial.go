package transport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/coder/websocket"
)

// DefaultHandshakeTimeout bounds a Dial's TCP connect and HTTP upgrade unless DialOptions
// sets another value.
const DefaultHandshakeTimeout = 10 * time.Second

// DialOptions configures Dial. The zero value is ready to use.
type DialOptions struct {
	// Header is sent with the upgrade request; the SDK puts its credential here
	// ("Authorization: Bearer <token>") rather than in the URL.
	Header http.Header
	// ReadLimit is the largest message accepted, in bytes (DefaultReadLimit when zero). A
	// larger message closes the connection with StatusMessageTooBig.
	ReadLimit int64
	// HandshakeTimeout bounds the connect and upgrade (DefaultHandshakeTimeout when zero).
	HandshakeTimeout time.Duration
	// KeepAlive enables pings; disabled when zero.
	KeepAlive KeepAlive
	// CompressionMode offers permessage-deflate; disabled when zero.
	CompressionMode CompressionMode
	// HTTPClient makes the upgrade request (http.DefaultClient when nil). Its Timeout, if
	// any, also bounds the handshake.
	HTTPClient *http.Client
}

// HandshakeError reports a server that answered the upgrade request with something other
// than 101 Switching Protocols, e.g. 401 for a bad token or 404 for a wrong path.
type HandshakeError struct {
	// StatusCode is the HTTP status of the response.
	StatusCode int
}

// Error describes the refusal.
func (e *HandshakeError) Error() string {
	return fmt.Sprintf("transport: websocket upgrade refused: HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
}

// Dial opens a WebSocket connection to rawURL (ws, wss, http or https). ctx bounds the
// handshake only; the connection lives until it is closed.
//
// Errors never contain the URL's query or user info, where tokens may travel; a refused
// upgrade is a *HandshakeError.
func Dial(ctx context.Context, rawURL string, opts DialOptions) (Conn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errors.New("transport: dial: malformed URL")
	}
	switch u.Scheme {
	case "ws", "wss", "http", "https":
	default:
		return nil, fmt.Errorf("transport: dial %s: unsupported scheme %q", redact(u), u.Scheme)
	}
	mode, err := opts.CompressionMode.websocket()
	if err != nil {
		return nil, err
	}
	timeout := opts.HandshakeTimeout
	if timeout <= 0 {
		timeout = DefaultHandshakeTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	signs := new(lifeSigns)
	var dialer combiningDialer
	client := opts.HTTPClient
	if combineWrites {
		var t *http.Transport
		if client, t = combiningClient(client, &dialer); t != nil {
			defer t.CloseIdleConnections() // the clone is this dial's: a redirect's connection is not needed again
		}
	}
	ws, resp, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{
		HTTPClient:      client,
		HTTPHeader:      opts.Header,
		CompressionMode: mode,
		OnPingReceived:  signs.ping,
		OnPongReceived:  signs.pong,
	})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, fmt.Errorf("transport: dial %s: %w", redact(u), &HandshakeError{StatusCode: resp.StatusCode})
		}
		return nil, fmt.Errorf("transport: dial %s: %w", redact(u), scrub(err))
	}
	return newWSConn(ws, dialer.conn(), opts.ReadLimit, opts.KeepAlive, signs), nil
}

// redact returns u without user info, query or fragment: what may be shown in errors and logs.
func redact(u *url.URL) string {
	r := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	return r.String()
}

// scrub drops the layers of err that print the request URL (net/http's *url.Error), keeping
// the cause, so errors.Is still finds net errors and context errors.
func scrub(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}
